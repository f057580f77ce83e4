/**
 * Sealing a session: the log read once, every record verified, the receipt composed incrementally
 * and the package streamed to disk. Linear in records means the 10^5 run takes about ten times the
 * 10^4 run. Composing alone (records already decoded) is timed too, to show the receipt is linear.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiptComposer } from '../src/evidence/receipt.js';
import type { EventRecord } from '../src/evidence/record.js';
import { sealLog } from '../src/evidence/seal.js';
import { type BenchModule, type BenchResult, seconds } from './harness.js';
import { benchKey, SESSION, workloadLog, workloadRecord } from './programs/workload.js';

const SIZES = [10_000, 100_000] as const;

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
    rmSync(dir, { recursive: true, force: true });
    const [small, large] = SIZES;
    const row = (name: string, times: number[]): BenchResult => ({
      name: `${name}, ${large} vs ${small} records`,
      measured: `${times[1]!.toFixed(2)} s (${(large / times[1]!).toFixed(0)} records/s)`,
      baseline: `${times[0]!.toFixed(3)} s for ${small}`,
      ratio: times[1]! / times[0]!,
      target: '~10 (linear)',
    });
    return [
      row('seal (read, verify on all cores, compose, write)', seal),
      row('seal on one thread', sealInThread),
      row('compose the receipt alone', compose),
    ];
  },
};

export default bench;
