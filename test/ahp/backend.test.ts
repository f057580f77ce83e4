/**
 * The backend kit, the rule-file policy and `tally ahp serve`, with real sockets and processes.
 * Oracles: the protocol's error table (-32001 unsupported version with data.supported, -32002
 * unsupported event, -32003 unavailable, -32004 internal), JSON-RPC 2.0 (-32700/-32600/-32601/
 * -32602; notifications never answered), the HTTP binding (204 for a notification, 200 +
 * application/json for a response), RFC 9110 (405 with Allow, 415, 413), the official schemas
 * (success answers validate as intercept responses), and requests taken from the official
 * interop scenarios.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BackendUnavailable, createBackend, type Effect } from '../../src/ahp/backend/kit.js';
import { evaluateRules, parseRules, RulesError } from '../../src/ahp/backend/rules.js';
import { loadScenarioRows, officialSchemas } from './scenario-replay.js';
import { tempDir } from './transport-helpers.js';

const RESPONSE_SCHEMA = 'https://agenthooksprotocol.org/schemas/draft/intercept-response.schema.json';
const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));
const row = loadScenarioRows().find((r) => r.id === 'deny-blocks')!;
/** An official intercept request (tool.before, tool name `task`, advertises deny/allow/ask/...). */
const REQUEST = row.request as unknown as { id: string; params: Record<string, unknown> } & Record<
  string,
  unknown
>;
type Rpc = {
  id: unknown;
  result?: { effects: Effect[] };
  error?: { code: number; message: string; data?: Record<string, unknown> };
};

const ajv = officialSchemas();

describe('backend kit: JSON-RPC answers', () => {
  let effects: Effect[] = [];
  let throwing: Error | undefined;
  const kit = createBackend({
    intercept: () => {
      if (throwing) throw throwing;
      return effects;
    },
    manifest: { events: [] },
  });
  const call = async (message: unknown) => (await kit.handleMessage(message)) as Rpc | undefined;
  const withParams = (patch: Record<string, unknown>) => ({
    ...REQUEST,
    params: { ...REQUEST.params, ...patch },
  });

  test('a success answer carries the event id and validates against the official schema', async () => {
    effects = [{ type: 'deny', reason: 'no' }];
    const answer = await call(REQUEST);
    assert.equal(answer?.id, (REQUEST.params.event as { id: string }).id);
    assert.ok(ajv.validate(RESPONSE_SCHEMA, answer), JSON.stringify(ajv.errors));
  });

  test('protocol and JSON-RPC errors', async () => {
    const cases: [unknown, number | null][] = [
      [[REQUEST], -32600],
      ['text', -32600],
      [{ ...REQUEST, jsonrpc: '1.0' }, -32600],
      [{ ...REQUEST, id: '' }, -32600],
      [{ ...REQUEST, method: 'hooks/unknown' }, -32601],
      [{ ...REQUEST, params: [] }, -32602],
      [withParams({ event: 'x' }), -32602],
      [withParams({ capabilities: {} }), -32602],
      [{ ...REQUEST, id: 'not-the-event-id' }, -32602],
      [withParams({ protocolVersion: '2025-01-01' }), -32001],
      [withParams({ event: { ...(REQUEST.params.event as object), type: 'turn.end' } }), -32002],
      [withParams({ event: { ...(REQUEST.params.event as object), type: 'tool.error' } }), -32002],
      [
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'hooks/capabilities',
          params: { protocolVersion: 'draft', extra: 1 },
        },
        -32602,
      ],
    ];
    for (const [message, code] of cases) {
      const answer = await call(message);
      assert.equal(answer?.error?.code, code, JSON.stringify(message).slice(0, 80));
      assert.ok(
        ajv.validate('https://agenthooksprotocol.org/schemas/draft/json-rpc-message.schema.json', answer),
        JSON.stringify(ajv.errors),
      );
    }
    const version = await call(withParams({ protocolVersion: '2025-01-01' }));
    assert.deepStrictEqual(version?.error?.data, { supported: ['draft'] });
  });

  test('capabilities discovery answers the manifest', async () => {
    const answer = (await kit.handleMessage({
      jsonrpc: '2.0',
      id: 1,
      method: 'hooks/capabilities',
      params: { protocolVersion: 'draft' },
    })) as {
      result: unknown;
    };
    assert.deepStrictEqual(answer.result, { protocolVersion: 'draft', manifest: { events: [] } });
  });

  test('handler failures: -32003 when unavailable, -32004 otherwise, with no internals', async () => {
    throwing = new BackendUnavailable('db down at 10.0.0.5');
    assert.equal((await call(REQUEST))?.error?.code, -32003);
    throwing = new Error('stack trace with /etc/secret-path');
    const answer = await call(REQUEST);
    assert.equal(answer?.error?.code, -32004);
    assert.ok(!JSON.stringify(answer).includes('secret-path'));
    throwing = undefined;
  });

  test('unadvertised effects are refused with -32004, never sent or silently dropped', async () => {
    const advertised = REQUEST.params.capabilities as { effects: string[] };
    assert.ok(!advertised.effects.includes('flow'));
    effects = [
      { type: 'deny', reason: 'x' },
      { type: 'flow', operation: 'stop', reason: 'y' },
    ];
    const answer = await call(REQUEST);
    assert.equal(answer?.error?.code, -32004);
    assert.deepStrictEqual(answer?.error?.data, { unadvertised: ['flow'] });
    effects = [{ type: 'modify', target: 'output', operation: 'replace', value: [] }];
    assert.deepStrictEqual((await call(REQUEST))?.error?.data, { unadvertised: ['modify(output, replace)'] });
  });

  test('notifications are never answered, valid or not', async () => {
    for (const note of [
      {
        jsonrpc: '2.0',
        method: 'hooks/observe',
        params: { protocolVersion: 'draft', event: REQUEST.params.event },
      },
      { jsonrpc: '2.0', method: 'hooks/observe', params: { protocolVersion: 'nope' } },
      { jsonrpc: '2.0', method: 'hooks/whatever' },
    ]) {
      assert.equal(await kit.handleMessage(note), undefined);
    }
  });
});

describe('backend kit over HTTP', () => {
  let url = '';
  const server = createServer(createBackend({ intercept: () => [], maxBodyBytes: 2048 }).http);
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const send = (method: string, body: string, type = 'application/json') =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpRequest(url, { method, headers: { 'content-type': type } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end(method === 'GET' ? undefined : body);
    });

  test('status codes', async () => {
    const ok = await send('POST', JSON.stringify(REQUEST));
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['content-type'], 'application/json');
    assert.equal((JSON.parse(ok.body) as Rpc).id, REQUEST.id);
    const get = await send('GET', '');
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
    assert.equal((await send('POST', JSON.stringify(REQUEST), 'text/plain')).status, 415);
    const bad = await send('POST', '{"jsonrpc":');
    assert.equal(bad.status, 400);
    assert.equal((JSON.parse(bad.body) as Rpc).error?.code, -32700);
    assert.equal((await send('POST', JSON.stringify({ pad: 'x'.repeat(4096) }))).status, 413);
    const note = await send(
      'POST',
      JSON.stringify({ jsonrpc: '2.0', method: 'hooks/observe', params: { protocolVersion: 'draft' } }),
    );
    assert.equal(note.status, 204);
    assert.equal(note.body, '');
  });
});

describe('rule files', () => {
  const rules = parseRules(
    JSON.stringify({
      rules: [
        {
          events: ['tool.*'],
          match: { tool: 'Bash', commandGlob: 'rm -rf *' },
          effect: 'deny',
          message: 'no recursive deletes',
        },
        { events: ['tool.before'], match: { pathGlob: '**/.env' }, effect: 'ask', message: 'secrets file' },
        { events: ['*'], match: { tool: 'task' }, effect: 'allow', message: 'tasks are fine' },
      ],
    }),
  );
  const context = (tool: Record<string, unknown>, effects = ['deny', 'allow', 'ask', 'message']) => ({
    event: { id: 'e', type: 'tool.before', tool },
    capabilities: { effects },
    params: {},
  });

  test('first match wins; globs follow the documented rules', () => {
    assert.deepStrictEqual(
      evaluateRules(rules, context({ name: 'Bash', input: { command: 'rm -rf /tmp/x' } })),
      [{ type: 'deny', reason: 'no recursive deletes' }],
    );
    assert.deepStrictEqual(
      evaluateRules(rules, context({ name: 'Edit', input: { file_path: 'a/b/.env' } })),
      [{ type: 'ask' }, { type: 'message', text: 'secrets file' }],
    );
    assert.deepStrictEqual(
      evaluateRules(rules, context({ name: 'Edit', input: { file_path: 'a/.envrc' } })),
      [],
    );
    assert.deepStrictEqual(evaluateRules(rules, context({ name: 'task', input: {} }, ['deny'])), []);
  });

  test('rule globs are the certificate globs of docs/policy.md', () => {
    const deny = (match: Record<string, string>) =>
      parseRules(
        JSON.stringify({ rules: [{ events: ['tool.before'], match, effect: 'deny', message: 'm' }] }),
      );
    const hits = (match: Record<string, string>, input: Record<string, unknown>) =>
      evaluateRules(deny(match), context({ name: 'Edit', input })).length === 1;
    // Paths: `*` stays in a segment, `**` crosses them, `**/` may match no directory, a trailing
    // `/**` also matches the directory itself.
    assert.ok(hits({ pathGlob: 'src/*.ts' }, { file_path: 'src/a.ts' }));
    assert.ok(!hits({ pathGlob: 'src/*.ts' }, { file_path: 'src/x/a.ts' }));
    assert.ok(hits({ pathGlob: 'src/**/*.ts' }, { file_path: 'src/x/y/a.ts' }));
    assert.ok(hits({ pathGlob: 'src/**/*.ts' }, { file_path: 'src/a.ts' }));
    assert.ok(hits({ pathGlob: 'src/**' }, { path: 'src' }));
    // Commands: both stars match anything, slashes and newlines included.
    assert.ok(hits({ commandGlob: 'git push *' }, { command: 'git push origin/main' }));
    assert.ok(hits({ commandGlob: 'echo *' }, { command: 'echo a\nb' }));
    // Only stars are special; `?` and `[`, wildcards elsewhere, must be escaped to be written at
    // all (a rule from another dialect is refused, not run matching less), `\` escapes.
    assert.ok(!hits({ pathGlob: 'a\\?.ts' }, { file_path: 'ab.ts' }));
    assert.ok(hits({ pathGlob: 'a\\?.ts' }, { file_path: 'a?.ts' }));
    assert.ok(hits({ pathGlob: 'x\\[1].ts' }, { file_path: 'x[1].ts' }));
    assert.ok(hits({ commandGlob: 'echo \\*' }, { command: 'echo *' }));
    assert.ok(!hits({ commandGlob: 'echo \\*' }, { command: 'echo x' }));
    // A pattern that makes a backtracking matcher explode is answered by the automaton, right.
    const hostile = `${'a'.repeat(5000)}!`;
    assert.ok(!hits({ commandGlob: '*a*a*a*a*a*a*a*a*a*a*b' }, { command: hostile }));
    assert.ok(hits({ commandGlob: '*a*a*a*a*a*a*a*a*a*a*!' }, { command: hostile }));
  });

  test('bad rule files name the JSON pointer at fault', () => {
    const cases: [unknown, string][] = [
      [[], '/rules'],
      [{ rules: [{ events: [], effect: 'deny', message: 'x' }] }, '/rules/0/events'],
      [{ rules: [{ events: ['turn.end'], effect: 'deny', message: 'x' }] }, '/rules/0/events/0'],
      [{ rules: [{ events: ['*'], effect: 'block', message: 'x' }] }, '/rules/0/effect'],
      [{ rules: [{ events: ['*'], effect: 'deny' }] }, '/rules/0/message'],
      [{ rules: [{ events: ['*'], effect: 'allow', match: { regex: '.*' } }] }, '/rules/0/match/regex'],
      [
        { rules: [{ events: ['*'], effect: 'allow', match: { commandGlob: 'a***' } }] },
        '/rules/0/match/commandGlob',
      ],
      [
        { rules: [{ events: ['*'], effect: 'allow', match: { pathGlob: 'x\\' } }] },
        '/rules/0/match/pathGlob',
      ],
      [
        { rules: [{ events: ['*'], effect: 'allow', match: { pathGlob: 'secret?.txt' } }] },
        '/rules/0/match/pathGlob',
      ],
      [
        { rules: [{ events: ['*'], effect: 'allow', match: { commandGlob: 'rm [a-z]*' } }] },
        '/rules/0/match/commandGlob',
      ],
      [
        { rules: [{ events: ['*'], effect: 'allow', match: { pathGlob: '**/*.{ts,js}' } }] },
        '/rules/0/match/pathGlob',
      ],
    ];
    for (const [doc, pointer] of cases) {
      assert.throws(
        () => parseRules(JSON.stringify(doc)),
        (e: unknown) => e instanceof RulesError && e.detail?.pointer === pointer,
      );
    }
  });
});

describe('tally ahp serve', { timeout: 30_000 }, () => {
  const rulesFile = join(tempDir(), 'rules.json');
  writeFileSync(
    rulesFile,
    JSON.stringify({
      rules: [{ events: ['tool.before'], match: { tool: 'task' }, effect: 'deny', message: 'tasks are off' }],
    }),
  );

  test('--stdio answers one line per request and exits 0 at EOF', async () => {
    const child = spawn(process.execPath, [TALLY, 'ahp', 'serve', '--stdio', '--rules', rulesFile], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stdin.end(`${JSON.stringify(REQUEST)}\n`);
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0);
    const lines = out.trimEnd().split('\n');
    assert.equal(lines.length, 1);
    const answer = JSON.parse(lines[0]!) as Rpc;
    assert.deepStrictEqual(answer.result?.effects, [{ type: 'deny', reason: 'tasks are off' }]);
    assert.ok(ajv.validate(RESPONSE_SCHEMA, answer));
  });

  test('--port 0 prints the bound port, serves HTTP, and stops cleanly on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [TALLY, 'ahp', 'serve', '--port', '0', '--rules', rulesFile, '--json'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const first = await new Promise<string>((r) => child.stdout.once('data', (c) => r(String(c))));
    const { port } = JSON.parse(first) as { port: number };
    assert.ok(port > 0);
    const body = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(REQUEST),
    });
    assert.equal(body.status, 200);
    assert.deepStrictEqual(((await body.json()) as Rpc).result?.effects, [
      { type: 'deny', reason: 'tasks are off' },
    ]);
    child.kill('SIGTERM');
    assert.equal(await new Promise<number | null>((r) => child.on('exit', r)), 0);
  });

  test('a bad rule file is a usage error (exit 2) naming the pointer', async () => {
    const bad = join(tempDir(), 'bad.json');
    writeFileSync(bad, JSON.stringify({ rules: [{ events: ['*'], effect: 'nope' }] }));
    const child = spawn(process.execPath, [TALLY, 'ahp', 'serve', '--stdio', '--rules', bad], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 2);
    assert.match(err, /\/rules\/0\/effect/);
  });

  test('neither --stdio nor --port is a usage error (exit 2) asking for exactly one', async () => {
    const child = spawn(process.execPath, [TALLY, 'ahp', 'serve', '--rules', rulesFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    assert.equal(code, 2);
    assert.match(err, /give exactly one of --stdio or --port N/);
    assert.doesNotMatch(err, /--port must be/);
  });
});
