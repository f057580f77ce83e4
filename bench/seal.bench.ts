/**
 * Sealing a session: the log read once, every record verified, the receipt composed incrementally
 * and the package streamed to disk. Linear in records means the 10^5 run takes about ten times the
 * 10^4 run. Composing alone (records already decoded) is timed too, to show the receipt is linear.
 * The peak memory of sealing is measured in a fresh process per size (this file, run as a program);
 * BENCH_FULL=1 adds the 10^6-record log.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sealLog } from '../src/evidence/package/seal.js';
import { ReceiptComposer } from '../src/evidence/receipt/receipt.js';
import type { EventRecord } from '../src/evidence/record/record.js';
import { type BenchModule, type BenchResult, seconds } from './harness.js';
import { benchKey, SESSION, workloadLog, workloadRecord } from './programs/workload.js';

const SIZES = [10_000, 100_000] as const;
const here = fileURLToPath(import.meta.url);

interface SealRun {
  records: number;
  maxRssMb: number;
  receiptBytes: number;
}

/** Seals an n-record log in a fresh process and reports its peak memory. */
function sealInFreshProcess(n: number, outPath: string): SealRun {
  const out = execFileSync(process.execPath, [here, '--seal', String(n), outPath], { encoding: 'utf8' });
  return JSON.parse(out) as SealRun;
}

if (process.argv[1] === here && process.argv[2] === '--seal') {
  const n = Number(process.argv[3]);
  const key = benchKey();
  const logPath = await workloadLog(n);
  const sealed = await sealLog({
    logPath,
    outPath: process.argv[4]!,
    session: SESSION,
    records: n,
    signer: { privateKey: key.privateKey, keyId: key.keyId },
  });
  const receiptBytes = Buffer.from(sealed.seal.receipt.payload, 'base64').length;
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ records: n, maxRssMb, receiptBytes })}\n`);
}

function composeSeconds(records: readonly EventRecord[]): number {
  const start = process.hrtime.bigint();
  const composer = new ReceiptComposer();
  for (const r of records) composer.add(r);
  composer.finish('0'.repeat(64));
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const bench: BenchModule = {
  title: 'session sealing (streaming compose + seal)',
  async run() {
    const key = benchKey();
    const signer = { privateKey: key.privateKey, keyId: key.keyId };
    const dir = mkdtempSync(join(tmpdir(), 'tally-bench-seal-'));
    const seal: number[] = [];
    const sealInThread: number[] = [];
    const compose: number[] = [];
    for (const n of SIZES) {
      process.stderr.write(`  sealing ${n} records…\n`);
      const logPath = await workloadLog(n);
      const outPath = join(dir, `${n}.tally`);
      seal.push(await seconds(() => sealLog({ logPath, outPath, session: SESSION, records: n, signer })));
      sealInThread.push(
        await seconds(() => sealLog({ logPath, outPath, session: SESSION, records: n, signer, workers: 0 })),
      );
      const records: EventRecord[] = [];
      for (let i = 0; i < n; i++) records.push(workloadRecord(i, null));
      composeSeconds(records); // warm up
      compose.push(composeSeconds(records));
    }
    const memorySizes = process.env.BENCH_FULL ? [...SIZES, 1_000_000] : [...SIZES];
    const memory: SealRun[] = [];
    for (const n of memorySizes) {
      process.stderr.write(`  sealing ${n} records in a fresh process…\n`);
      memory.push(sealInFreshProcess(n, join(dir, `fresh-${n}.tally`)));
    }
    rmSync(dir, { recursive: true, force: true });
    const [small, large] = SIZES;
    const row = (name: string, times: number[]): BenchResult => ({
      name: `${name}, ${large} vs ${small} records`,
      measured: `${times[1]!.toFixed(2)} s (${(large / times[1]!).toFixed(0)} records/s)`,
      baseline: `${times[0]!.toFixed(3)} s for ${small}`,
      ratio: times[1]! / times[0]!,
      target: '~10 (linear)',
    });
    const first = memory[0]!;
    return [
      row('seal (read, verify on all cores, compose, write)', seal),
      row('seal on one thread', sealInThread),
      row('compose the receipt alone', compose),
      ...memory.slice(1).map(
        (run): BenchResult => ({
          name: `seal peak RSS (fresh process), ${run.records} vs ${first.records} records`,
          measured: `${run.maxRssMb.toFixed(0)} MB (receipt ${(run.receiptBytes / 1e6).toFixed(1)} MB)`,
          baseline: `${first.maxRssMb.toFixed(0)} MB at ${first.records} records (receipt ${(first.receiptBytes / 1e6).toFixed(1)} MB)`,
          ratio: run.maxRssMb / first.maxRssMb,
          target: '~1.0 (flat), < 256 MB',
        }),
      ),
    ];
  },
};

export default bench;
