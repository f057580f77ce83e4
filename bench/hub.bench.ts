/**
 * The hub under load from a separate process on loopback, against floors measured in the same
 * run: verified uploads of 1,000-record packages (SQLite and PostgreSQL) against the verifier's
 * own rate on the same packages (target >= 0.7); small packages against the verifier on them (the
 * fixed costs of HTTP, signatures, storage and the log); and log appends (signed chain heads) with
 * two replicas on one PostgreSQL against raw single-row locked-update transactions there.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { createKey } from '../src/core/keystore.js';
import { sealLog } from '../src/evidence/package/seal.js';
import { verifyPackage } from '../src/evidence/package/verify.js';
import { digestRef, encodeRecord } from '../src/evidence/record/codec.js';
import { type BenchModule, type BenchResult, percentile } from './harness.js';
import { benchKey, workloadRecord } from './programs/workload.js';

const TALLY = fileURLToPath(new URL('../../bin/tally.js', import.meta.url));
const LOAD = fileURLToPath(new URL('../test/hub/programs/load.js', import.meta.url));
const PG_ADMIN = process.env.TALLY_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function writePackage(
  dir: string,
  session: string,
  records: number,
): Promise<{ session: string; path: string }> {
  const key = benchKey();
  const signer = { privateKey: key.privateKey, keyId: key.keyId };
  const logPath = join(dir, `${session}.log`);
  const lines: Buffer[] = [];
  let prev: string | null = null;
  for (let i = 0; i < records; i++) {
    const { line, digest } = encodeRecord({ ...workloadRecord(i, prev), session }, signer);
    prev = digestRef(digest);
    lines.push(line);
  }
  writeFileSync(logPath, Buffer.concat(lines));
  const path = join(dir, `${session}.tally`);
  await sealLog({ logPath, outPath: path, session, records, signer });
  return { session, path };
}

interface Served {
  url: string;
  stop(): Promise<void>;
}

async function serve(args: string[], home: string): Promise<Served> {
  const child = spawn(
    process.execPath,
    [TALLY, 'hub', 'serve', '--json', '--rate-ip', '1000000', '--rate-key', '1000000', ...args],
    {
      env: { PATH: process.env.PATH, TALLY_HOME: home },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]!) as { url: string }).url);
    });
    child.on('exit', (code) => reject(new Error(`tally hub serve exited ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

interface LoadRun {
  jobs: number;
  seconds: number;
  latencies: number[];
}

async function load(config: Record<string, unknown>): Promise<LoadRun> {
  const { stdout } = await promisify(execFile)(process.execPath, [LOAD, JSON.stringify(config)], {
    maxBuffer: 256 << 20,
  });
  return JSON.parse(stdout) as LoadRun;
}

async function withDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `tally_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** Packages verified one after another by the CLI's verifier, in this process: packages/s. */
async function verifierRate(paths: readonly string[]): Promise<number> {
  const key = benchKey();
  const files = paths.map((p) => readFileSync(p));
  const start = process.hrtime.bigint();
  for (const bytes of files) {
    const result = await verifyPackage(bytes, { trusted: [key.publicKey], now: new Date() });
    if (!result.ok) throw new Error('a benchmark package did not verify');
  }
  return files.length / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** The sequencer's floor: single-row SELECT … FOR UPDATE + UPDATE transactions, `clients` at once. */
async function lockedUpdateRate(url: string, clients: number, total: number): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: clients });
  await pool.query('CREATE TABLE floor_head (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)');
  await pool.query('INSERT INTO floor_head VALUES (1, 0)');
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next++ < total) {
        const c = await pool.connect();
        try {
          await c.query('BEGIN');
          await c.query('SELECT n FROM floor_head WHERE id = 1 FOR UPDATE');
          await c.query('UPDATE floor_head SET n = n + 1 WHERE id = 1');
          await c.query('COMMIT');
        } finally {
          c.release();
        }
      }
    }),
  );
  const rate = total / (Number(process.hrtime.bigint() - start) / 1e9);
  await pool.end();
  return rate;
}

/** Latencies (ms) of GETs of `paths`, `concurrency` at a time, each path `rounds` times. */
async function getLatencies(
  base: string,
  paths: readonly string[],
  rounds: number,
  concurrency: number,
): Promise<number[]> {
  const queue = Array.from({ length: rounds }, () => paths).flat();
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let path = queue.pop(); path !== undefined; path = queue.pop()) {
        const start = process.hrtime.bigint();
        const response = await fetch(new URL(path, base));
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
        latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

function p99(run: LoadRun): number {
  return percentile(
    [...run.latencies].sort((a, b) => a - b),
    99,
  );
}

const bench: BenchModule = {
  title: 'hub: verified uploads and log appends',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'tally-bench-hub-'));
    const keyDir = join(dir, 'ship');
    createKey(keyDir, 'ship', { privateKey: benchKey().privateKey });
    const results: BenchResult[] = [];
    try {
      process.stderr.write('  sealing 48 packages of 1,000 records and 200 of 10…\n');
      const big: { session: string; path: string }[] = [];
      for (let i = 0; i < 48; i++) big.push(await writePackage(dir, `ses_bench_big_${i}`, 1000));
      const small: { session: string; path: string }[] = [];
      for (let i = 0; i < 200; i++) small.push(await writePackage(dir, `ses_bench_small_${i}`, 10));
      const bigFloor = await verifierRate(big.map((p) => p.path));
      const smallFloor = await verifierRate(small.map((p) => p.path));

      const uploads = async (store: string, dbArgs: string[], home: string) => {
        const hub = await serve(dbArgs, home);
        try {
          const bigRun = await load({
            urls: [hub.url],
            keyDir,
            packages: big,
            heads: 0,
            concurrency: 4,
            checkpointEvery: 0,
          });
          const smallRun = await load({
            urls: [hub.url],
            keyDir,
            packages: small,
            heads: 0,
            concurrency: 8,
            checkpointEvery: 0,
          });
          const bigRate = bigRun.jobs / bigRun.seconds;
          const smallRate = smallRun.jobs / smallRun.seconds;
          results.push({
            name: `verified uploads, 1,000-record packages, ${store}`,
            measured: `${bigRate.toFixed(1)} packages/s, p99 ${p99(bigRun).toFixed(0)} ms (4 concurrent)`,
            baseline: `verifier alone ${bigFloor.toFixed(1)} packages/s`,
            ratio: bigRate / bigFloor,
            target: '>= 0.7',
          });
          results.push({
            name: `verified uploads, 10-record packages, ${store}`,
            measured: `${smallRate.toFixed(0)} packages/s, p99 ${p99(smallRun).toFixed(1)} ms (8 concurrent)`,
            baseline: `verifier alone ${smallFloor.toFixed(0)} packages/s`,
            ratio: smallRate / smallFloor,
            target: 'report (fixed costs)',
          });
          // The receipt page of a 1,000-record package (rendered from the stored bytes) against
          // serving those bytes raw: what rendering adds to a read.
          const sessions = big.slice(0, 16).map((p) => encodeURIComponent(p.session));
          const pages = await getLatencies(
            hub.url,
            sessions.map((s) => `/receipt/${s}`),
            20,
            4,
          );
          const raws = await getLatencies(
            hub.url,
            sessions.map((s) => `/v1/packages/${s}/raw`),
            20,
            4,
          );
          results.push({
            name: `receipt page, 1,000-record packages, ${store}`,
            measured: `p99 ${percentile(pages, 99).toFixed(1)} ms, p50 ${percentile(pages, 50).toFixed(1)} ms (4 concurrent, ${pages.length} GETs)`,
            baseline: `the package bytes raw: p99 ${percentile(raws, 99).toFixed(1)} ms`,
            ratio: percentile(raws, 99) / percentile(pages, 99),
            target: 'report',
          });
        } finally {
          await hub.stop();
        }
      };
      await uploads('SQLite', ['--db', join(dir, 'hub.db')], join(dir, 'home-sqlite'));
      await withDatabase((url) => uploads('PostgreSQL', ['--db', url], join(dir, 'home-pg')));

      await withDatabase(async (url) => {
        const floor = await lockedUpdateRate(url, 8, 2000);
        createKey(join(dir, 'shared'), 'hub');
        const keyFile = join(dir, 'shared', 'keys', 'hub.key.json');
        const replicas = [
          await serve(['--db', url, '--key', keyFile], join(dir, 'r1')),
          await serve(['--db', url, '--key', keyFile], join(dir, 'r2')),
        ];
        try {
          const run = await load({
            urls: replicas.map((r) => r.url),
            keyDir,
            packages: [],
            heads: 2000,
            concurrency: 8,
            checkpointEvery: 0,
          });
          const rate = run.jobs / run.seconds;
          results.push({
            name: 'log appends (signed chain heads), two replicas on PostgreSQL',
            measured: `${rate.toFixed(0)} appends/s, p99 ${p99(run).toFixed(1)} ms (8 concurrent)`,
            baseline: `raw locked single-row update ${floor.toFixed(0)} tx/s`,
            ratio: rate / floor,
            target: 'report',
          });
        } finally {
          await Promise.all(replicas.map((r) => r.stop()));
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return results;
  },
};

export default bench;
