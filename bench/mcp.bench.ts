/**
 * The MCP gateway's added latency per `tools/call`, against a floor measured in the same run: the
 * same call made directly (the real SDK client to the real server-everything over stdio) plus one
 * Ed25519 sign of a record-sized payload and one fdatasync of a record-sized line — the recording
 * a judged call cannot do without. Target: p50 ≤ 1.3× the floor.
 *
 * The per-call work is shown beside it: the boundary's decision alone (judge + sign + fdatasync,
 * in this process, on a second project's session), the relay alone (./programs/mcp-relay.ts: the
 * gateway over a sink that allows at once and records nothing: two more pipe hops, the framing and
 * the reading of each line), and what is left: what the decision costs more inside the gateway,
 * beside the client and the server, than alone.
 */

import { execFileSync } from 'node:child_process';
import { sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeEvent } from '../src/capture/mcp/events.js';
import { pae } from '../src/core/dsse.js';
import { generateKeyPair } from '../src/core/keys.js';
import { loadShipSigner } from '../src/session/identity.js';
import { openSession } from '../src/session/lifecycle.js';
import { places } from '../src/session/paths.js';
import { currentSession, readSessionInfo } from '../src/session/store.js';
import { type BenchModule, type BenchResult, percentile } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const TALLY = join(here, '..', '..', 'bin', 'tally.js');
const RELAY = join(here, 'programs', 'mcp-relay.js');
const PIPE = join(here, 'programs', 'pipe-relay.js');
const EVERYTHING = join(
  here,
  '..',
  '..',
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p = (xs: number[], q: number) => percentile(sorted(xs), q);

async function client(argv: string[], cwd: string, env: Record<string, string>): Promise<Client> {
  const [command, ...args] = argv as [string, ...string[]];
  const c = new Client({ name: 'bench', version: '1.0.0' });
  await c.connect(new StdioClientTransport({ command, args, cwd, env, stderr: 'ignore' }));
  return c;
}

async function timed(n: number, fn: (i: number) => Promise<unknown>, offset = 0): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn(offset + i);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

const bench: BenchModule = {
  title: 'MCP gateway: added latency per tools/call',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'tally-bench-mcp-'));
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      TALLY_HOME: join(dir, 'home'),
    };
    // Two projects alike: the gateway records into the first; the boundary alone is timed on the second.
    const other = join(dir, 'other');
    mkdirSync(other);
    for (const cwd of [repo, other]) {
      const tally = (args: string[]) =>
        execFileSync(process.execPath, [TALLY, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
      execFileSync('git', ['init', '-q'], { cwd });
      tally(['init']);
      tally([
        'agent',
        'register',
        '--name',
        'coder',
        '--allow',
        'mcp__everything__*',
        '--forbid',
        'Read(.env)',
      ]);
      tally(['session', 'start', '--agent', 'coder']);
    }
    const where = places(other, env);
    const signer = await loadShipSigner(where, async () => undefined);
    const info = readSessionInfo(where.state, currentSession(where.state)!);
    const opened = await openSession({ state: where.state, session: info, signer, harness: { env } });
    const identity = {
      name: 'everything',
      command: process.execPath,
      args: [EVERYTHING, 'stdio'],
      cwd: other,
    };
    const decide = (i: number) =>
      opened.boundary.decide(
        beforeEvent(
          identity,
          'bench',
          { callId: `c${i}`, requestId: i, toolName: 'echo', input: { message: `call ${i}` } },
          new Date(),
        ),
        { source: 'mcp' },
      );
    const server = [process.execPath, EVERYTHING, 'stdio'];
    const direct = await client(server, repo, env);
    const gateway = await client(
      [process.execPath, TALLY, 'mcp', '--name', 'everything', '--', ...server],
      repo,
      env,
    );
    const relayOnly = await client([process.execPath, RELAY, ...server], repo, env);
    const pipeOnly = await client([process.execPath, PIPE, ...server], repo, env);
    const results: BenchResult[] = [];
    try {
      await direct.listTools();
      await gateway.listTools();
      await relayOnly.listTools();
      await pipeOnly.listTools();
      const call = (c: Client) => (i: number) =>
        c.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
      await timed(200, call(direct));
      await timed(200, call(gateway));
      await timed(200, call(relayOnly));
      await timed(200, call(pipeOnly));
      // The floor's recording, as the hook floor does it: sign a record-sized payload, append the
      // line, fdatasync — timed together and alone.
      const { privateKey } = generateKeyPair();
      const record = Buffer.alloc(900, 0x61);
      const file = await open(join(dir, 'floor.log'), 'a');
      const signMs: number[] = [];
      const syncMs: number[] = [];
      const recordOnce = async () => {
        const t0 = process.hrtime.bigint();
        const signature = sign(null, pae('application/vnd.tally.record+json', record), privateKey);
        const t1 = process.hrtime.bigint();
        await file.write(Buffer.concat([record, signature]));
        await file.datasync();
        signMs.push(Number(t1 - t0) / 1e6);
        syncMs.push(Number(process.hrtime.bigint() - t1) / 1e6);
      };
      // Alternate blocks, so drift on a shared machine hits the gateway and its floor alike.
      const directMs: number[] = [];
      const gatewayMs: number[] = [];
      const decideMs: number[] = [];
      const relayMs: number[] = [];
      const pipeMs: number[] = [];
      await timed(100, decide);
      for (let block = 0; block < 10; block++) {
        directMs.push(...(await timed(100, call(direct), 1000 + block * 100)));
        gatewayMs.push(...(await timed(100, call(gateway), 1000 + block * 100)));
        relayMs.push(...(await timed(100, call(relayOnly), 1000 + block * 100)));
        pipeMs.push(...(await timed(100, call(pipeOnly), 1000 + block * 100)));
        await timed(100, recordOnce);
        decideMs.push(...(await timed(100, decide, 1000 + block * 100)));
      }
      await file.close();
      const floor = p(directMs, 50) + p(signMs, 50) + p(syncMs, 50);
      results.push({
        name: 'tools/call through `tally mcp`, p50 (judged, recorded signed + fdatasync’d, relayed)',
        measured: `${p(gatewayMs, 50).toFixed(3)} ms`,
        baseline: `direct ${p(directMs, 50).toFixed(3)} + sign ${p(signMs, 50).toFixed(3)} + fdatasync ${p(syncMs, 50).toFixed(3)} = ${floor.toFixed(3)} ms`,
        ratio: p(gatewayMs, 50) / floor,
        target: '<= 1.3',
      });
      const floor99 = p(directMs, 99) + p(signMs, 99) + p(syncMs, 99);
      results.push({
        name: 'tools/call through `tally mcp`, p99',
        measured: `${p(gatewayMs, 99).toFixed(3)} ms`,
        baseline: `direct + sign + fdatasync, each at p99: ${floor99.toFixed(3)} ms`,
        ratio: p(gatewayMs, 99) / floor99,
        target: 'informational',
      });
      const decided = p(decideMs, 50);
      results.push({
        name: 'per call: the boundary’s decision alone (certificate judge + sign + fdatasync), p50',
        measured: `${decided.toFixed(3)} ms`,
        baseline: `sign + fdatasync ${(p(signMs, 50) + p(syncMs, 50)).toFixed(3)} ms`,
        ratio: decided / (p(signMs, 50) + p(syncMs, 50)),
        target: 'informational',
      });
      const relay = p(relayMs, 50) - p(directMs, 50);
      results.push({
        name: 'per call: the relay alone (two pipe hops, framing, line reading; nothing judged or recorded), p50',
        measured: `${relay.toFixed(3)} ms`,
        baseline: `direct call ${p(directMs, 50).toFixed(3)} ms`,
        ratio: relay / p(directMs, 50),
        target: 'informational',
      });
      // The least any gateway process adds (bytes forwarded, nothing read), with the recording the
      // floor counts: what the target leaves for judging and recording beyond one sign and one sync.
      const pipe = p(pipeMs, 50) - p(directMs, 50);
      results.push({
        name: 'per call: a bare byte relay (a process forwarding both pipes, nothing read), p50; ratio: that relay + sign + fdatasync against the floor',
        measured: `${pipe.toFixed(3)} ms`,
        baseline: `floor ${floor.toFixed(3)} ms`,
        ratio: (floor + pipe) / floor,
        target: 'informational: the least a gateway process can read',
      });
      const rest = p(gatewayMs, 50) - p(directMs, 50) - decided - relay;
      results.push({
        name: 'per call: the rest (gateway − direct − decision alone − relay alone: the decision’s extra cost in the gateway’s process, the answer’s batched record), p50',
        measured: `${rest.toFixed(3)} ms`,
        baseline: `the decision alone ${decided.toFixed(3)} ms`,
        ratio: rest / decided,
        target: 'informational',
      });
    } finally {
      await opened.close();
      await direct.close().catch(() => undefined);
      await gateway.close().catch(() => undefined);
      await relayOnly.close().catch(() => undefined);
      await pipeOnly.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    }
    return results;
  },
};

export default bench;
