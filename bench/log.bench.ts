/**
 * Signed event log: append throughput (signed + durable, group commit) against the raw Ed25519
 * sign rate, and streaming verification against the raw verify rate, with the peak memory of
 * verifying logs of growing size (each in a fresh process). BENCH_FULL=1 adds the 10^6-record log.
 */
import { execFileSync } from 'node:child_process';
import { sign, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalBytes } from '../src/core/canonical.js';
import { pae } from '../src/core/dsse.js';
import { generateKeyPair, keyId, rawPublicKey } from '../src/core/keys.js';
import { HeadFile } from '../src/evidence/log/head-file.js';
import { LogWriter } from '../src/evidence/log/writer.js';
import { RECORD_PAYLOAD_TYPE } from '../src/evidence/record/record.js';
import { type BenchModule, rate, seconds } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));

function sampleEvent(i: number) {
  return {
    id: `evt-${i}`,
    type: 'tool.before',
    time: '2026-11-30T12:00:00.000Z',
    source: 'urn:tally:bench',
    session: { id: 'ses_bench' },
    call: { id: `call-${i}` },
    tool: { origin: 'native', name: 'Bash', kind: 'shell', input: { command: `git status --short # ${i}` } },
  };
}

/** Appends n records keeping up to `inFlight` unacknowledged, as a busy recorder would. */
async function writeLog(
  path: string,
  signer: { privateKey: import('node:crypto').KeyObject; keyId: string },
  n: number,
  head?: HeadFile,
) {
  const log = await LogWriter.open(path, { session: 'ses_bench', signer, ...(head ? { head } : {}) });
  const inFlight = new Set<Promise<unknown>>();
  for (let i = 0; i < n; i++) {
    const p: Promise<unknown> = log
      .append({ source: 'hook', event: sampleEvent(i) })
      .then(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= 1024) await Promise.race(inFlight);
    else if (i % 64 === 63) await new Promise((r) => setImmediate(r)); // let completed syncs be noticed
  }
  await Promise.all(inFlight);
  await log.close();
}

const bench: BenchModule = {
  title: 'signed event log',
  async run() {
    const { privateKey, publicKey } = generateKeyPair();
    const signer = { privateKey, keyId: keyId(privateKey) };
    const dir = mkdtempSync(join(tmpdir(), 'tally-bench-log-'));
    // The raw floor: signing / verifying a message the size of a real record's PAE.
    const message = pae(
      RECORD_PAYLOAD_TYPE,
      canonicalBytes({ v: 1, seq: 1, event: sampleEvent(1), prev: 'x'.repeat(71) }),
    );
    const rawSign = rate(() => sign(null, message, privateKey));
    const signature = sign(null, message, privateKey);
    const rawVerify = rate(() => verify(null, message, publicKey, signature));

    const n = 20_000;
    const appendSeconds = await seconds(() => writeLog(join(dir, 'append.log'), signer, n));
    const appendRate = n / appendSeconds;

    const sequentialN = 300;
    const sequential = async (name: string, head?: HeadFile) => {
      const log = await LogWriter.open(join(dir, name), {
        session: 'ses_bench',
        signer,
        ...(head ? { head } : {}),
      });
      const took = await seconds(async () => {
        for (let i = 0; i < sequentialN; i++) await log.append({ source: 'hook', event: sampleEvent(i) });
      });
      await log.close();
      return took;
    };
    const seqSeconds = await sequential('sequential.log');
    // The same appends keeping the chain head outside the log: one signed head file per group commit.
    const headed = (name: string) =>
      new HeadFile(join(dir, 'heads', `${name}.head.json`), 'ses_bench', signer);
    const headAppendSeconds = await seconds(() =>
      writeLog(join(dir, 'append-head.log'), signer, n, headed('a')),
    );
    const headAppendRate = n / headAppendSeconds;
    const headSeqSeconds = await sequential('sequential-head.log', headed('s'));

    const pub = rawPublicKey(publicKey).toString('hex');
    const sizes = process.env.BENCH_FULL ? [10_000, 100_000, 1_000_000] : [10_000, 100_000];
    const verifies = [];
    for (const size of sizes) {
      const path = join(dir, `verify-${size}.log`);
      process.stderr.write(`  writing ${size} records…\n`);
      await writeLog(path, signer, size);
      process.stderr.write(`  verifying ${size} records in a fresh process…\n`);
      const out = execFileSync(process.execPath, [join(here, 'programs/verify-log.js'), path, pub], {
        encoding: 'utf8',
      });
      verifies.push(JSON.parse(out) as { records: number; seconds: number; maxRssMb: number });
      rmSync(path);
    }
    rmSync(dir, { recursive: true, force: true });
    const small = verifies[0]!;
    const large = verifies[verifies.length - 1]!;
    const verifyRate = large.records / large.seconds;
    return [
      {
        name: 'log append, signed + fdatasync, concurrent appends (group commit)',
        measured: `${appendRate.toFixed(0)} records/s`,
        baseline: `raw crypto.sign ${rawSign.toFixed(0)}/s`,
        ratio: appendRate / rawSign,
        target: '>= 0.5',
      },
      {
        name: 'log append, one awaited append at a time (one fdatasync each)',
        measured: `${(sequentialN / seqSeconds).toFixed(0)} records/s`,
        baseline: `raw crypto.sign ${rawSign.toFixed(0)}/s`,
        ratio: sequentialN / seqSeconds / rawSign,
        target: 'informational (disk-bound)',
      },
      {
        name: 'log append with the chain head file, concurrent appends (group commit)',
        measured: `${headAppendRate.toFixed(0)} records/s`,
        baseline: `the same without a head file ${appendRate.toFixed(0)}/s`,
        ratio: headAppendRate / appendRate,
        target: 'report (one signed head written in place per group commit)',
      },
      {
        name: 'log append with the chain head file, one awaited append at a time',
        measured: `${(sequentialN / headSeqSeconds).toFixed(0)} records/s`,
        baseline: `the same without a head file ${(sequentialN / seqSeconds).toFixed(0)}/s`,
        ratio: seqSeconds / headSeqSeconds,
        target: 'report (a signature and an in-place write per append)',
      },
      {
        name: `log verify, streaming, ${large.records} records`,
        measured: `${verifyRate.toFixed(0)} records/s`,
        baseline: `raw crypto.verify ${rawVerify.toFixed(0)}/s`,
        ratio: verifyRate / rawVerify,
        target: '>= 0.7',
      },
      {
        name: `log verify peak RSS, ${large.records} vs ${small.records} records`,
        measured: `${large.maxRssMb.toFixed(0)} MB vs ${small.maxRssMb.toFixed(0)} MB`,
        baseline: `${small.records} records`,
        ratio: large.maxRssMb / small.maxRssMb,
        target: '~1.0 (flat)',
      },
    ];
  },
};

export default bench;
