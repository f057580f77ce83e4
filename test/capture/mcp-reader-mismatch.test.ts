/**
 * Bytes the gateway reads one way and a server another: it must not forward them. Two readers are
 * the oracles. Go's encoding/json, which Go MCP servers decode requests with (mcp-go's
 * `HandleMessage` shapes, in go-decoder/main.go, built when a `go` is found), matches keys without
 * regard to case: `{"method":"ping","Method":"tools/call"}` is a call to it. And the MCP SDK's own
 * Express app (`createMcpExpressApp`, `express.json()`) decodes a body by its `charset`: in UTF-7,
 * `+ACI-` is a quote, so a body that is a harmless request as UTF-8 is a `tools/call` to it. Each
 * smuggled call ran unjudged and unrecorded before the gateway refused such bytes.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { makeProject, type Project, TALLY_BIN } from '../cli/tally-process.js';
import { tempDir } from '../temp.js';
import { certifiedProject, certify, startHttpGateway } from './mcp-fixture.js';

const goBuilt = (() => {
  const out = join(tempDir('tally-go-decoder-'), 'decoder');
  const built = spawnSync('go', ['build', '-o', out, '.'], {
    cwd: resolve('test/capture/go-decoder'),
    stdio: 'ignore',
  });
  return built.status === 0 && existsSync(out) ? out : undefined;
})();

/** Lines a client may write that Go's encoding/json reads as a forbidden call, or with other arguments. */
const CASE_LINES = [
  '{"jsonrpc":"2.0","id":2,"method":"ping","Method":"tools/call","params":{"name":"delete_all","arguments":{}}}',
  '{"jsonrpc":"2.0","id":3,"METHOD":"tools/call","params":{"name":"delete_all","arguments":{}}}',
  '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"ok.txt"},"Arguments":{"path":"secret/key"}}}',
  '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","argumentſ":{"path":"secret/key"}}}',
  '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"ok.txt","PATH":"secret/key"}}}',
  // An integer past 2^53 first: the strict parser's first fault; the duplicate after it still counts.
  '{"jsonrpc":"2.0","_":12345678901234567890,"id":7,"method":"tools\\/call","method":"ping","params":{"name":"delete_all"}}',
];

/**
 * `lines` written to `tally mcp` in front of the Go decoder in the project (a `secret/` folder
 * made): what came back, one answer a line, and the decoder's own log of what it ran.
 */
async function throughGoDecoder(
  project: Project,
  lines: string[],
): Promise<{ answers: string[]; ran: string[] }> {
  mkdirSync(join(project.root, 'secret'));
  const log = join(project.root, 'server.log');
  const gateway = spawn(
    process.execPath,
    [TALLY_BIN, 'mcp', '--name', 's', '--agent', 'coder', '--', goBuilt!],
    {
      cwd: project.root,
      env: { ...project.env, LOG: log },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let out = '';
  gateway.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  gateway.stdin.end(`${lines.join('\n')}\n`);
  await new Promise((r) => gateway.once('close', r));
  return {
    answers: out.split('\n').filter(Boolean),
    ran: readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}

describe('tally mcp: messages a server reads otherwise are not forwarded', () => {
  it('keys the same but for case, and a duplicate after an inexact number: refused, the server never sees them', {
    skip: !goBuilt && 'no go to build the decoder',
  }, async () => {
    const project = await certifiedProject('tally-mcp-case-', 's', 'delete_all');
    const allowed =
      '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"ok.txt"}}}';
    const { answers: out, ran } = await throughGoDecoder(project, [...CASE_LINES, allowed]);
    const answers = out.map(
      (l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } },
    );
    const refused = answers.filter((a) => a.error !== undefined);
    assert.equal(refused.length, CASE_LINES.length, out.join('\n'));
    for (const a of refused) assert.equal(a.id, null);
    // The Go decoder's own log: only the allowed call, read as the gateway judged it.
    assert.deepEqual(ran, ['RAN write_file {"path":"ok.txt"}']);
  });
});

describe('tally mcp: an argument a case-insensitive server reads as one the policy reads', () => {
  it('is refused: the typed Go tool never writes where the certificate forbids', {
    skip: !goBuilt && 'no go to build the decoder',
  }, async () => {
    const project = makeProject('tally-mcp-argcase-');
    await certify(project, ['--allow', 'mcp__s__*', '--forbid', 'Write(secret/**)']);
    const write = (id: number, args: Record<string, string>) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'write_typed', arguments: { ...args, content: 'x' } },
      });
    // Go's encoding/json binds the first two to the tool's `path`; the policy reads `file_path` too.
    const variants: Record<string, string>[] = [
      { PATH: 'secret/key' },
      { pAth: 'secret/key' },
      { File_Path: 'secret/key' },
    ];
    const lines = [
      write(1, { path: 'ok.txt' }),
      write(2, { path: 'secret/key' }),
      ...variants.map((v, i) => write(3 + i, v)),
    ];
    const { answers: out, ran } = await throughGoDecoder(project, lines);
    const answers = new Map(
      out
        .map(
          (l) =>
            JSON.parse(l) as {
              id: number;
              result?: { isError?: boolean };
              error?: { code: number; message: string };
            },
        )
        .map((a) => [a.id, a]),
    );
    assert.equal(answers.get(2)?.result?.isError, true, 'the path spelled as read is judged and denied');
    for (const id of [3, 4, 5]) {
      assert.equal(answers.get(id)?.error?.code, -32602, out.join('\n'));
      assert.match(answers.get(id)!.error!.message, /without regard to case/);
    }
    // The Go server's own log: only the allowed write ran.
    assert.deepEqual(ran, ['RAN write_typed path=ok.txt']);
  });
});

interface ExpressServer {
  url: string;
  ran: string[];
  close(): Promise<void>;
}

/** The SDK's own Express app, one stateless transport per request, the body as express.json() read it. */
async function startExpressServer(): Promise<ExpressServer> {
  const ran: string[] = [];
  const app = createMcpExpressApp();
  app.post('/mcp', async (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
    const server = new Server({ name: 'notes', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [] }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      ran.push(`${request.params.name} ${JSON.stringify(request.params.arguments ?? {})}`);
      return { content: [{ type: 'text', text: `ran ${request.params.name}` }] };
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const http = await new Promise<HttpServer>((done) => {
    const s = app.listen(0, '127.0.0.1', () => done(s));
  });
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`,
    ran,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((done) => http.close(() => done()));
    },
  };
}

/** `text` in UTF-7's base64 form: `+…-` around its UTF-16BE bytes. */
function utf7(text: string): string {
  return `+${Buffer.from(text, 'utf16le').swap16().toString('base64').replace(/=+$/, '')}-`;
}

describe('tally mcp --http: bodies a server decodes before it reads them', () => {
  it('a charset other than UTF-8 and a content-encoding are refused; the SDK app never runs the call', async () => {
    const project = await certifiedProject('tally-mcp-charset-', 'notes', 'write_note');
    const upstream = await startExpressServer();
    const gateway = await startHttpGateway(project, upstream.url, 'notes');
    try {
      const post = async (body: Buffer | string, headers: Record<string, string>) => {
        const res = await fetch(gateway.url, {
          method: 'POST',
          headers: { accept: 'application/json, text/event-stream', ...headers },
          body: typeof body === 'string' ? body : new Uint8Array(body),
        });
        return { status: res.status, text: await res.text() };
      };
      const call = (id: number) =>
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"write_note","arguments":{"text":"smuggled"}}}`;
      // As UTF-8 a request whose method is a base64 string; as UTF-7 the forbidden call.
      const hidden = `{"id":1,"method":"${utf7('tools/call","params":{"name":"write_note","arguments":{"text":"smuggled"}},"jsonrpc":"2.0')}"}`;
      const seven = await post(hidden, { 'content-type': 'application/json; charset=utf-7' });
      assert.equal(seven.status, 415, seven.text);
      const quoted = await post(hidden, { 'content-type': 'application/json; Charset="UTF-7"' });
      assert.equal(quoted.status, 415, quoted.text);
      const zipped = await post(gzipSync(call(2)), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      assert.equal(zipped.status, 415, zipped.text);
      assert.deepEqual(upstream.ran, [], 'the server never ran the call');
      // UTF-8 named as such goes on, judged: the forbidden call is denied, an allowed one runs.
      const denied = await post(call(3), { 'content-type': 'application/json; charset=utf-8' });
      assert.match(denied.text, /Tally denied this call/);
      const echo = await post(
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}',
        { 'content-type': 'application/json; charset=UTF-8' },
      );
      assert.equal(echo.status, 200, echo.text);
      assert.deepEqual(upstream.ran, ['echo {"text":"hi"}']);
    } finally {
      gateway.child.kill('SIGKILL');
      await upstream.close();
    }
  });
});
