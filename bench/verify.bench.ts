/**
 * Full verification of a sealed package (every check, receipt recomputed) against the raw
 * single-core Ed25519 verify rate measured in the same run, on one thread and on every core; and
 * the peak memory of verifying packages of growing size, each in a fresh process.
 * BENCH_FULL=1 adds the 10^6-record package (its log is signed once and cached).
 */
import { execFileSync } from 'node:child_process';
import { sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalBytes } from '../src/core/canonical.js';
import { pae } from '../src/core/dsse.js';
import { verifyPackage } from '../src/evidence/package/verify.js';
import { RECORD_PAYLOAD_TYPE } from '../src/evidence/record/record.js';
import { type BenchModule, type BenchResult, rate, seconds } from './harness.js';
import { benchKey, workloadPackage, workloadRecord } from './programs/workload.js';

const here = dirname(fileURLToPath(import.meta.url));

function mb(run: Run): string {
  return `${(run.receiptBytes.bytes / 1e6).toFixed(1)} MB`;
}
const NOW = new Date('2026-12-01T00:00:00Z');

interface Run {
  records: number;
  seconds: number;
  maxRssMb: number;
  /** The receipt_recomputed check's detail: the receipt's size. */
  receiptBytes: { bytes: number };
}

const bench: BenchModule = {
  title: 'package verification',
  async run() {
    const key = benchKey();
    // The raw floor: one Ed25519 verify of a message the size of a typical record's PAE.
    const message = pae(RECORD_PAYLOAD_TYPE, canonicalBytes(workloadRecord(6, `sha256:${'0'.repeat(64)}`)));
    const signature = sign(null, message, key.privateKey);
    const rawVerify = rate(() => verify(null, message, key.publicKey, signature));

    const n = 100_000;
    process.stderr.write(`  preparing a ${n}-record package…\n`);
    const bytes = readFileSync(await workloadPackage(n));
    const timed = async (workers?: number) => {
      let ok = false;
      const s = await seconds(async () => {
        const options = { trusted: [key.publicKey], now: NOW, ...(workers === undefined ? {} : { workers }) };
        ok = (await verifyPackage(bytes, options)).ok;
      });
      if (!ok) throw new Error('the benchmark package did not verify');
      return n / s;
    };
    const single = await timed(0);
    const pooled = await timed();

    const sizes = process.env.BENCH_FULL ? [10_000, 100_000, 1_000_000] : [10_000, 100_000];
    const runs: Run[] = [];
    for (const size of sizes) {
      const path = await workloadPackage(size);
      process.stderr.write(`  verifying ${size} records in a fresh process…\n`);
      const out = execFileSync(
        process.execPath,
        [join(here, 'programs/verify-package.js'), path, key.publicHex],
        {
          encoding: 'utf8',
        },
      );
      runs.push(JSON.parse(out) as Run);
    }
    const small = runs[0]!;
    const results: BenchResult[] = [
      {
        name: `verify ${n}-record package, one thread (workers: 0)`,
        measured: `${single.toFixed(0)} records/s`,
        baseline: `raw crypto.verify ${rawVerify.toFixed(0)}/s (one core)`,
        ratio: single / rawVerify,
        target: '>= 0.6',
      },
      {
        name: `verify ${n}-record package, ${availableParallelism()} worker threads`,
        measured: `${pooled.toFixed(0)} records/s`,
        baseline: `raw crypto.verify ${rawVerify.toFixed(0)}/s (one core)`,
        ratio: pooled / rawVerify,
        target: `> 1.0 (limit ${availableParallelism()} cores)`,
      },
    ];
    for (const run of runs.slice(1)) {
      results.push({
        name: `verify peak RSS (fresh process), ${run.records} vs ${small.records} records`,
        measured: `${run.maxRssMb.toFixed(0)} MB (receipt ${mb(run)}) vs ${small.maxRssMb.toFixed(0)} MB`,
        baseline: `${small.records} records (receipt ${mb(small)})`,
        ratio: run.maxRssMb / small.maxRssMb,
        target: '~1.0 (flat), < 256 MB',
      });
    }
    return results;
  },
};

export default bench;
