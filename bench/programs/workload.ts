/**
 * A synthetic but realistic session for sealing and verification benchmarks: model turns, reads
 * over a working set of files, edits, shell commands with exit codes, file-change reports and
 * policy decisions, by one agent. Logs are written once per size and key into a cache directory
 * and reused across runs (signing 10^6 records takes a while).
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyId, rawPublicKey, toPublicKey } from '../../src/core/keys.js';
import { digestRef, encodeRecord } from '../../src/evidence/record/codec.js';
import type { CanonicalEvent, EventRecord } from '../../src/evidence/record/record.js';

export const SESSION = 'ses_bench_workload';
const START = Date.parse('2026-11-30T12:00:00.000Z');
const COMMANDS = ['npm test', 'git status --short', 'git diff --stat', 'npx tsc -p .', 'ls -la src'];

/** A fixed benchmark key (PKCS#8 DER of a constant seed), so cached logs stay valid across runs. */
export function benchKey(): {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyId: string;
  publicHex: string;
} {
  const prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
  const seed = Buffer.alloc(32, 7);
  const privateKey = createPrivateKey({ key: Buffer.concat([prefix, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = toPublicKey(privateKey);
  return {
    privateKey,
    publicKey,
    keyId: keyId(publicKey),
    publicHex: rawPublicKey(publicKey).toString('hex'),
  };
}

function tool(name: string, kind: string, input: Record<string, unknown>) {
  return { origin: 'native', name, kind, input };
}

/** Event i of the session: a cycle of ten records after the session start. */
export function workloadEvent(i: number): { event: CanonicalEvent; decision?: EventRecord['decision'] } {
  const base = { id: `evt-${i}`, time: new Date(START + i).toISOString(), source: 'urn:bench:harness' };
  const session = { id: 'harness-1', cwd: '/repo' };
  if (i === 0) {
    return {
      event: {
        ...base,
        type: 'session.start',
        session: { ...session, workspaceRoots: ['/repo'] },
        trigger: 'startup',
        harness: { name: 'bench-agent', version: '1.0' },
      },
    };
  }
  const k = Math.floor(i / 10);
  const call = { id: `call-${k}-${i % 10 < 6 ? (i % 10 < 4 ? 'r' : 'e') : 'b'}` };
  const allow = { decision: 'allow' as const, by: 'tally-policy', reason: 'within bounded actions' };
  switch (i % 10) {
    case 0:
      return {
        event: { ...base, type: 'model.request.before', session, model: { id: 'model-a', provider: 'p' } },
      };
    case 1:
      return {
        event: { ...base, type: 'model.response.after', session, model: { id: 'model-a', provider: 'p' } },
      };
    case 2:
      return {
        event: {
          ...base,
          type: 'tool.before',
          session,
          call,
          tool: tool('Read', 'read', { file_path: `src/f${k % 200}.ts` }),
        },
        decision: allow,
      };
    case 3:
      return { event: { ...base, type: 'tool.after', session, call, tool: { name: 'Read' }, outcome: 'ok' } };
    case 4: {
      const input = { file_path: `src/f${k % 50}.ts`, old_string: `a${k}`, new_string: `b${k}` };
      return {
        event: { ...base, type: 'tool.before', session, call, tool: tool('Edit', 'edit', input) },
        decision: allow,
      };
    }
    case 5:
      return { event: { ...base, type: 'tool.after', session, call, tool: { name: 'Edit' }, outcome: 'ok' } };
    case 6: {
      const input = { command: COMMANDS[k % COMMANDS.length] };
      return {
        event: { ...base, type: 'tool.before', session, call, tool: tool('Bash', 'shell', input) },
        decision: allow,
      };
    }
    case 7:
      return {
        event: {
          ...base,
          type: 'tool.after',
          session,
          call,
          tool: { name: 'Bash' },
          outcome: 'ok',
          execution: { status: 'executed' },
          durationMs: 120,
          extensions: { 'dev.tally.process': { exitCode: 0 } },
        },
      };
    case 8:
      return {
        event: {
          ...base,
          type: 'file.changed',
          session,
          changes: [{ path: `src/f${k % 50}.ts`, operation: 'update' }],
        },
      };
    default:
      return {
        event: { ...base, type: 'model.response.after', session, model: { id: 'model-b', provider: 'p' } },
      };
  }
}

export function workloadRecord(i: number, prev: string | null): EventRecord {
  const { event, decision } = workloadEvent(i);
  return {
    v: 2,
    seq: i,
    time: event.time,
    session: SESSION,
    source: 'hook',
    agent: { name: 'bench-agent', instance: 'agent-1', model: 'model-a', provider: 'p' },
    event,
    ...(decision ? { decision } : {}),
    prev,
  };
}

/** The path of an n-record workload log signed with `benchKey()`, writing it on first use. */
export async function workloadLog(n: number): Promise<string> {
  const dir = join(tmpdir(), 'tally-bench-workload');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `session-${n}.log`);
  if (existsSync(path)) return path;
  const key = benchKey();
  const signer = { privateKey: key.privateKey, keyId: key.keyId };
  const tmp = `${path}.${process.pid}.tmp`;
  const out = createWriteStream(tmp);
  let prev: string | null = null;
  for (let i = 0; i < n; i++) {
    const { line, digest } = encodeRecord(workloadRecord(i, prev), signer);
    prev = digestRef(digest);
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    if (i % 100_000 === 99_999) process.stderr.write(`  signed ${i + 1} of ${n} records\n`);
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  renameSync(tmp, path);
  return path;
}

/** The sealed package of the n-record workload log, sealed on first use and then reused. */
export async function workloadPackage(n: number): Promise<string> {
  const log = await workloadLog(n);
  const path = log.replace(/\.log$/, '.tally');
  if (existsSync(path)) return path;
  const key = benchKey();
  const { sealLog } = await import('../../src/evidence/package/seal.js');
  await sealLog({
    logPath: log,
    outPath: path,
    session: SESSION,
    records: n,
    signer: { privateKey: key.privateKey, keyId: key.keyId },
  });
  return path;
}
