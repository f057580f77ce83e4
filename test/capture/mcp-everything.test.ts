/**
 * Transparency: the same session with the real SDK client against the real server-everything,
 * once directly and once through `tally mcp`. The oracle is the direct run: every message in both
 * directions (initialize, tools, resources, prompts, completion, progress notifications, the
 * server's sampling and roots requests and their answers, logging, ping) must be the same through
 * the gateway. Then the bytes: a raw client's lines reach the server exactly as written (the
 * server's stdin copied by `tee`), and the server's bytes reach the client exactly as the direct
 * run's; malformed tools/call requests are protocol errors that never reach the server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { makeProject, TALLY_BIN } from '../cli/tally-process.js';
import { connect, EVERYTHING_SERVER, type Tapped, throughGateway } from './mcp-fixture.js';

const SERVER = [process.execPath, EVERYTHING_SERVER, 'stdio'];

function prepare(client: Client, notes: string[]): void {
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: 'scripted',
    role: 'assistant',
    content: { type: 'text', text: 'a sampled answer' },
  }));
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    notes.push('roots');
    return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    notes.push(`log:${n.params.level}`);
  });
}

async function session(tapped: Tapped, notes: string[]): Promise<void> {
  const c = tapped.client;
  // The server asks for the roots on a timer after initialisation, then logs them: wait for both,
  // so that the rest of the stream depends on the client alone.
  for (let i = 0; i < 200 && !notes.includes('log:info'); i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(notes, ['roots', 'log:info']);
  const tools = await c.listTools();
  notes.push(`tools:${tools.tools.map((t) => t.name).join(',')}`);
  await c.callTool({ name: 'echo', arguments: { message: 'hello ✓ "quoted"' } });
  await c.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
  await c.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
    undefined,
    // The SDK may drop the last progress callback once the result is in; the log keeps every message.
    { onprogress: () => undefined },
  );
  await c.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 5 } });
  await c.callTool({ name: 'get-roots-list', arguments: {} });
  await c.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } });
  await c.callTool({ name: 'get-tiny-image', arguments: {} });
  const resources = await c.listResources();
  const first = resources.resources[0];
  if (first) await c.readResource({ uri: first.uri });
  await c.listResourceTemplates();
  const prompts = await c.listPrompts();
  notes.push(`prompts:${prompts.prompts.map((p) => p.name).join(',')}`);
  await c.getPrompt({ name: 'simple-prompt' });
  await c.getPrompt({ name: 'args-prompt', arguments: { city: 'Lisbon', state: 'PT' } });
  await c.complete({
    ref: { type: 'ref/prompt', name: 'completable-prompt' },
    argument: { name: 'department', value: 'E' },
  });
  await c.setLoggingLevel('debug');
  await c.ping();
  const unknown = await c.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: Error) => e.message);
  notes.push(`unknown:${typeof unknown === 'string' ? unknown : JSON.stringify(unknown.content)}`);
}

/** The messages with what a run may vary in (the logging server's random level) set aside. */
function comparable(log: Tapped['log']): unknown[] {
  return log.map(([dir, m]) => {
    const msg = m as { method?: string; params?: Record<string, unknown> };
    if (msg.method === 'notifications/message') return [dir, msg.method];
    return [dir, m];
  });
}

describe('tally mcp in front of @modelcontextprotocol/server-everything', () => {
  it('passes every protocol feature through unchanged: the message streams match the direct run', async () => {
    const project = makeProject('tally-mcp-all-');
    assert.equal((await project.tally(['init'])).code, 0);
    const env = project.env as Record<string, string>;
    const capabilities = { capabilities: { sampling: {}, roots: { listChanged: true } } };
    const runs: { log: unknown[]; notes: string[] }[] = [];
    for (const argv of [SERVER, throughGateway('everything', SERVER)]) {
      const notes: string[] = [];
      const tapped = await connect(argv, {
        cwd: project.root,
        env,
        capabilities,
        before: (c) => prepare(c, notes),
      });
      try {
        await session(tapped, notes);
      } finally {
        await tapped.close();
      }
      runs.push({ log: comparable(tapped.log), notes });
    }
    const [direct, gateway] = runs as [(typeof runs)[0], (typeof runs)[0]];
    assert.ok(
      direct.log.some((e) => JSON.stringify(e).includes('"progress":3,"total":3')),
      'the server reported progress',
    );
    assert.ok(direct.log.length > 40, `the session exchanged ${direct.log.length} messages`);
    assert.ok(
      direct.log.some((e) => JSON.stringify(e).includes('"sampling/createMessage"')),
      'the server asked the client to sample',
    );
    assert.deepEqual(gateway.notes, direct.notes);
    assert.deepEqual(gateway.log, direct.log);
  });

  it('forwards the bytes as written and answers malformed calls itself', async () => {
    const project = makeProject('tally-mcp-bytes-');
    assert.equal((await project.tally(['init'])).code, 0);
    const seen = join(project.dir, 'server-stdin.log');
    const teed = ['sh', '-c', `tee "${seen}" | exec "${process.execPath}" "${EVERYTHING_SERVER}" stdio`];
    // Odd but valid framing: spaces, escapes, key order, an id of each kind, a trailing \r.
    const lines: [string, unknown][] = [
      [
        '{ "jsonrpc" : "2.0", "id" : 0, "method" : "initialize", "params" : { "protocolVersion" : "2025-06-18", "capabilities" : {}, "clientInfo" : { "name" : "raw", "version" : "0" } } }',
        0,
      ],
      ['{"method":"notifications/initialized","jsonrpc":"2.0"}', undefined],
      ['{"jsonrpc":"2.0","id":"a\\u0062c","method":"tools/list"}', 'abc'],
      [
        '{"params":{"arguments":{"message":"caf\\u00e9 \\/ ok"},"name":"echo"},"method":"tools/call","id":7,"jsonrpc":"2.0"}\r',
        7,
      ],
      ['{"jsonrpc":"2.0","id":8,"method":"ping"}', 8],
    ];
    const malformed: [string, unknown][] = [
      ['{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"message":"no name"}}}', 9],
      ['{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":"text"}}', 10],
      [
        '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"message":NaN}}}',
        null,
      ],
      ['{"jsonrpc":"2.0","id":12,"method":"ping","method":"tools/call","params":{"name":"echo"}}', null],
    ];
    const direct = await rawSession(SERVER, lines, project.root, project.env);
    const through = await rawSession(
      [process.execPath, TALLY_BIN, 'mcp', '--name', 'everything', '--', ...teed],
      [...lines, ...malformed],
      project.root,
      project.env,
    );
    assert.equal(
      readFileSync(seen, 'utf8'),
      `${lines.map(([l]) => l).join('\n')}\n`,
      'the server received exactly the bytes written',
    );
    const replies = through.split('\n').filter(Boolean);
    const isAnswerToMalformed = (l: string) => {
      const id = (JSON.parse(l) as { id?: unknown }).id;
      return id === null || id === 9 || id === 10;
    };
    const answers = replies
      .filter(isAnswerToMalformed)
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number } });
    assert.deepEqual(
      answers.map((a) => [a.id, a.error?.code]),
      [
        [9, -32602],
        [10, -32602],
        [null, -32700],
        [null, -32700],
      ],
    );
    assert.equal(
      replies.filter((l) => !isAnswerToMalformed(l)).join('\n'),
      direct.trimEnd(),
      'the client received the server’s bytes',
    );
  });
});

/** Writes each line to `argv`'s stdin once the answer to the one before (by its id) has arrived. */
async function rawSession(
  argv: string[],
  lines: [string, unknown][],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  let check: (() => void) | null = null;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    check?.();
  });
  const answered = (id: unknown) =>
    new Promise<void>((resolve) => {
      check = () => {
        const ids = out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { id?: unknown; method?: string })
          .filter((m) => m.method === undefined)
          .map((m) => m.id);
        if (ids.includes(id)) {
          check = null;
          resolve();
        }
      };
      check();
    });
  for (const [line, id] of lines) {
    child.stdin.write(`${line}\n`);
    if (id !== undefined) await answered(id);
  }
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.stdin.end();
  await closed;
  return out;
}
