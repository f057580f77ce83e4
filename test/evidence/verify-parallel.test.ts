/**
 * Verification on a worker pool must say exactly what verification on one thread says: the same
 * checks, codes, sequence numbers and byte offsets, for good packages and tampered ones alike. The
 * oracle is the single-threaded path plus what each tampering must break (the package layout in
 * src/evidence/package.ts: header line, one line per record, seal line).
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { generateKeyPair, keyId } from '../../src/core/keys.js';
import { readLogLines, verifyLogFile } from '../../src/evidence/log/reader.js';
import { LogWriter } from '../../src/evidence/log/writer.js';
import { buildPackage } from '../../src/evidence/package/build.js';
import { sealLog } from '../../src/evidence/package/seal.js';
import { type VerifyResult, verifyPackage } from '../../src/evidence/package/verify.js';
import type { CanonicalEvent } from '../../src/evidence/record/record.js';
import { tempDir } from '../temp.js';

const RECORDS = 700; // several 256-line batches, and a partial last one
const NOW = new Date('2099-06-01T00:00:00Z');
const { privateKey, publicKey } = generateKeyPair();
const signer = { privateKey, keyId: keyId(privateKey) };
let dir: string;
let logPath: string;
let pkg: Buffer;
let lines: Buffer[];

function event(i: number): CanonicalEvent {
  const base = { id: `e${i}`, time: '2026-01-01T00:00:00Z', source: 'urn:test', session: { cwd: '/repo' } };
  if (i === 0)
    return { ...base, type: 'session.start', session: { cwd: '/repo', workspaceRoots: ['/repo'] } };
  if (i === RECORDS - 1) return { ...base, type: 'session.end', outcome: 'completed' };
  const call = { id: `c${Math.floor(i / 2)}` };
  if (i % 2 === 1)
    return {
      ...base,
      type: 'tool.before',
      call,
      tool: { name: 'Read', input: { file_path: `f${i % 7}.ts` } },
    };
  return { ...base, type: 'tool.after', call, tool: { name: 'Read' }, outcome: 'ok' };
}

function join_(parts: Buffer[]): Buffer {
  return Buffer.concat(parts.flatMap((p) => [p, Buffer.from('\n')]));
}

async function both(bytes: Buffer): Promise<VerifyResult> {
  const single = await verifyPackage(bytes, { trusted: [publicKey], now: NOW, workers: 0 });
  const pooled = await verifyPackage(bytes, { trusted: [publicKey], now: NOW, workers: 2 });
  assert.deepEqual(pooled, single);
  return single;
}

function firstFailure(result: VerifyResult) {
  assert.equal(result.ok, false);
  const failed = result.checks.find((c) => !c.ok && c.code !== 'skipped')!;
  return { check: failed.check, code: failed.code, detail: failed.detail as Record<string, unknown> };
}

/** Offset of line `index` (0 = header) in the package. */
function offsetOf(parts: Buffer[], index: number): number {
  return parts.slice(0, index).reduce((n, p) => n + p.length + 1, 0);
}

before(async () => {
  dir = tempDir('tally-verify-parallel-');
  logPath = join(dir, 'events.log');
  const log = await LogWriter.open(logPath, { session: 'ses_parallel', signer });
  for (let i = 0; i < RECORDS; i++) await log.append({ source: 'hook', event: event(i) });
  await log.close();
  await sealLog({
    logPath,
    outPath: join(dir, 'p.tally'),
    session: 'ses_parallel',
    records: RECORDS,
    signer,
  });
  pkg = readFileSync(join(dir, 'p.tally'));
  lines = pkg
    .subarray(0, pkg.length - 1)
    .toString('latin1')
    .split('\n')
    .map((l) => Buffer.from(l, 'latin1'));
});

describe('sealing: streamed, on a pool or not, gives the in-memory bytes', () => {
  it('sealLog with and without workers and buildPackage agree byte for byte', async () => {
    const pooled = join(dir, 'pooled.tally');
    await sealLog({
      logPath,
      outPath: pooled,
      session: 'ses_parallel',
      records: RECORDS,
      signer,
      workers: 2,
    });
    assert.ok(readFileSync(pooled).equals(pkg));
    const checked: Parameters<typeof buildPackage>[1][number][] = [];
    await verifyLogFile(logPath, { trusted: [publicKey], onRecord: (c) => checked.push(c) });
    const logLines: Buffer[] = [];
    for await (const { line } of readLogLines(logPath)) logLines.push(Buffer.from(line));
    assert.ok(buildPackage(logLines, checked, signer).bytes.equals(pkg));
    assert.equal(lines.length, RECORDS + 2);
  });

  it('a log holding fewer records than the count given is refused and leaves no file', async () => {
    const out = join(dir, 'short.tally');
    await assert.rejects(
      sealLog({ logPath, outPath: out, session: 'ses_parallel', records: RECORDS + 1, signer, workers: 2 }),
      /holds 700 records, 701 expected/,
    );
    assert.throws(() => readFileSync(out), /ENOENT/);
  });
});

describe('verifying on a worker pool gives the single-thread result', () => {
  it('a good package passes both ways', async () => {
    const result = await both(pkg);
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    assert.equal(result.receipt?.record_count, RECORDS);
  });

  it('a flipped byte in a late record fails its signature at that record', async () => {
    const parts = [...lines];
    const victim = Buffer.from(parts[651]!);
    const at = victim.indexOf('"sig":"') + 10;
    victim[at] = victim[at] === 0x41 ? 0x42 : 0x41;
    parts[651] = victim;
    const failed = firstFailure(await both(join_(parts)));
    assert.equal(failed.check, 'record_signatures');
    assert.equal(failed.detail.seq, 650);
    assert.equal(failed.detail.offset, offsetOf(parts, 651));
  });

  it('two swapped records fail the sequence at the first of them', async () => {
    const parts = [...lines];
    [parts[301], parts[302]] = [parts[302]!, parts[301]!];
    const failed = firstFailure(await both(join_(parts)));
    assert.deepEqual([failed.check, failed.detail.seq], ['record_sequence', 301]);
    assert.equal(failed.detail.offset, offsetOf(parts, 301));
  });

  it('a deleted and a duplicated record each fail where they are', async () => {
    const deleted = lines.filter((_, i) => i !== 500);
    assert.deepEqual(firstFailure(await both(join_(deleted))).detail.seq, 500);
    const duplicated = [...lines.slice(0, 11), lines[10]!, ...lines.slice(11)];
    const dup = firstFailure(await both(join_(duplicated)));
    assert.deepEqual([dup.check, dup.detail.seq], ['record_sequence', 9]);
  });

  it('a package cut inside a record, or with its seal edited, fails the same way', async () => {
    const cut = pkg.subarray(0, offsetOf(lines, 600) + 40);
    assert.equal(firstFailure(await both(cut)).check, 'record_count');
    const seal = JSON.parse(lines[lines.length - 1]!.toString()) as { merkle: { root: string } };
    seal.merkle.root = '0'.repeat(64);
    const edited = [...lines.slice(0, -1), Buffer.from(JSON.stringify(seal))];
    assert.equal(firstFailure(await both(join_(edited))).check, 'merkle_root');
    assert.equal(firstFailure(await both(Buffer.concat([pkg, Buffer.from('{}\n')]))).code, 'trailing-data');
  });

  it('an untrusted key fails before any record is read, both ways', async () => {
    const stranger = generateKeyPair().publicKey;
    const single = await verifyPackage(pkg, { trusted: [stranger], now: NOW, workers: 0 });
    const pooled = await verifyPackage(pkg, { trusted: [stranger], now: NOW, workers: 2 });
    assert.deepEqual(pooled, single);
    assert.equal(firstFailure(single).check, 'signer_pinned');
  });
});
