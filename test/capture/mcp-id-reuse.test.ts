/**
 * A client that breaks JSON-RPC's rule that ids in flight are unique (MCP: a client never reuses an
 * id in a session) must not get another request's answer recorded as a call's. The agent writes the
 * client's side, so it can send a `ping` with the id of a `tools/call` still running. Real parts: the
 * real server-everything behind `tally mcp` (stdio, its stdin copied by `tee`) and behind
 * `tally mcp --http` (the SDK's streamable-HTTP server), raw client bytes. Oracles: the bytes the
 * server received, and the result the client received for the call, whose RFC 8785 digest the
 * sealed package's `tool.after` must carry.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRecords } from '../agents/tally-flow.js';
import { TALLY_BIN } from '../cli/tally-process.js';
import {
  certifiedProject,
  EVERYTHING_SERVER,
  type HttpGateway,
  sortedJson,
  startEverythingHttp,
  startHttpGateway,
} from './mcp-fixture.js';

const digest = (value: unknown) => `sha256:${createHash('sha256').update(sortedJson(value)).digest('hex')}`;

/** The events of a sealed package. */
const events = (pkg: string) => packageRecords(pkg).map((r) => r.event as Record<string, unknown>);

/** The one call's `tool.after`: its outcome and the digest of the result it records. */
function callAfter(pkg: string): { outcome: unknown; digest: unknown } {
  const afters = events(pkg).filter((e) => e.type === 'tool.after');
  assert.equal(afters.length, 1, JSON.stringify(afters));
  const facts = (afters[0]!.extensions as Record<string, Record<string, unknown>>)['dev.tally.mcp']!;
  return { outcome: afters[0]!.outcome, digest: facts.result_digest };
}

const LONG_CALL = {
  name: 'trigger-long-running-operation',
  arguments: { duration: 0.6, steps: 1 },
};

const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

describe('MCP gateway: a request id reused while its call runs', () => {
  // A gateway that never answered would leave the test waiting: a bound, not a measurement.
  it('stdio: the ping is refused and never reaches the server; the call records its own answer', {
    timeout: 120_000,
  }, async () => {
    const project = await certifiedProject('tally-mcp-reuse-', 'everything', 'get-sum');
    const seen = join(project.dir, 'server-stdin.log');
    const server = `tee "${seen}" | exec "${process.execPath}" "${EVERYTHING_SERVER}" stdio`;
    const child = spawn(
      process.execPath,
      [TALLY_BIN, 'mcp', '--name', 'everything', '--agent', 'coder', '--', 'sh', '-c', server],
      { cwd: project.root, env: project.env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const answers = new Map<unknown, Record<string, unknown>[]>();
    let rest = '';
    let check = () => {};
    child.stdout.on('data', (d: Buffer) => {
      const parts = (rest + d.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts.filter(Boolean)) {
        const m = JSON.parse(line) as Record<string, unknown>;
        if (m.method !== undefined) continue;
        answers.set(m.id, [...(answers.get(m.id) ?? []), m]);
      }
      check();
    });
    const until = (done: () => boolean) =>
      new Promise<void>((resolve) => {
        check = () => done() && resolve();
        check();
      });
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    const ping = { jsonrpc: '2.0', id: 5, method: 'ping' };
    try {
      send(INIT);
      await until(() => answers.has(0));
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: LONG_CALL });
      send(ping);
      await until(() => (answers.get(5) ?? []).some((m) => 'result' in m));
    } finally {
      child.stdin.end();
    }
    assert.equal(await exited, 0, stderr);
    const got = answers.get(5)!;
    assert.equal(got.length, 2, JSON.stringify(got));
    const [refusal, result] = got as [{ error: { code: number; message: string } }, { result: unknown }];
    assert.equal(refusal.error.code, -32600);
    assert.match(refusal.error.message, /id 5 is in use/);
    assert.ok(!readFileSync(seen, 'utf8').includes('"ping"'), 'the server never saw the ping');
    const sealed = /sealed: (\S+\.tally)/.exec(stderr);
    assert.ok(sealed, stderr);
    assert.deepEqual(callAfter(sealed[1]!), { outcome: 'ok', digest: digest(result.result) });
  });

  it('HTTP: a ping POSTed with the call’s id is answered on its own exchange, never taken for the call’s', async () => {
    const project = await certifiedProject('tally-mcp-reuse-http-', 'everything', 'get-sum');
    const { server, url: remote } = await startEverythingHttp(project);
    let gateway: HttpGateway | undefined;
    try {
      gateway = await startHttpGateway(project, remote, 'everything');
      const url = gateway.url;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      const post = async (body: unknown, signal?: AbortSignal) => {
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
        const text = await res.text();
        // An event stream's data lines, or a JSON body.
        const messages = text.startsWith('{')
          ? [JSON.parse(text)]
          : text
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => JSON.parse(l.slice(6)));
        return {
          session: res.headers.get('mcp-session-id'),
          messages: messages as Record<string, unknown>[],
        };
      };
      const init = await post(INIT);
      assert.ok(init.session, 'the server gave a session');
      headers['mcp-session-id'] = init.session;
      headers['mcp-protocol-version'] = '2025-06-18';
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const abort = new AbortController();
      const call = post(
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: LONG_CALL },
        abort.signal,
      ).catch((error: Error) => error.name);
      await new Promise((r) => setTimeout(r, 150));
      const ping = await post({ jsonrpc: '2.0', id: 5, method: 'ping' });
      assert.deepEqual(
        ping.messages,
        [{ jsonrpc: '2.0', id: 5, result: {} }],
        'the server’s answer, relayed',
      );
      // The SDK's server keys its answers by id alone: the call's never comes. Past the tool's
      // duration, the client gives up on it.
      await new Promise((r) => setTimeout(r, 1_000));
      abort.abort();
      assert.equal(await call, 'AbortError');
      const stopping = gateway;
      const exited = new Promise((r) => stopping.child.once('exit', r));
      stopping.child.kill('SIGTERM');
      await exited;
      const sealed = /sealed: (\S+\.tally)/.exec(stopping.stderr());
      assert.ok(sealed, stopping.stderr());
      // Before, the ping's `{}` was recorded as the call's result.
      assert.deepEqual(callAfter(sealed[1]!), { outcome: 'cancelled', digest: undefined });
      const cancelled = events(sealed[1]!).find((e) => e.type === 'tool.after')!;
      // Why: its exchange ended, or the gateway stopped first (the abort and the stop race).
      assert.match(
        JSON.stringify(cancelled.extensions),
        /before the server’s answer|without the server’s answer/,
      );
      const verify = await project.tally(['verify', sealed[1]!, '--certificate', 'coder', '--json']);
      assert.equal(verify.code, 0, verify.stdout);
    } finally {
      gateway?.child.kill('SIGKILL');
      server.kill('SIGKILL');
    }
  });
});
