/**
 * A load generator in its own process: registers the ship, then uploads packages and sends
 * chain heads to every replica URL given, `concurrency` at a time, alternating replicas, and
 * fetches each replica's checkpoint as it goes. Prints {uploads, heads, checkpoints, latencies}.
 *
 * usage: node load.js CONFIG_JSON
 *   {urls, keyDir, packages: [{session, path}], heads, concurrency, checkpointEvery?: 4 (0: never)}
 * The benchmarks (bench/hub.bench.ts) drive the hub with this same program.
 */
import { readFileSync } from 'node:fs';
import { digest } from '../../../src/core/hash.js';
import { loadPrivateKey } from '../../../src/core/keystore.js';
import { hubRequest, hubUrl } from '../../../src/hub-client/http.js';
import { pushPackage, registerShip } from '../../../src/hub-client/push.js';
import { sendChainHead } from '../../../src/hub-client/witness.js';

interface Config {
  urls: string[];
  keyDir: string;
  packages: { session: string; path: string }[];
  heads: number;
  concurrency: number;
  checkpointEvery?: number;
  /** Session ids of the heads sent are `<headSessions>_<i mod 5>` (default ses_load). */
  headSessions?: string;
}

const config = JSON.parse(process.argv[2]!) as Config;
const loaded = loadPrivateKey(config.keyDir, 'ship');
const key = { keyId: loaded.key.keyId, privateKey: loaded.privateKey };
await registerShip(config.urls[0]!, key);

type Job = (url: string) => Promise<void>;
const jobs: Job[] = [];
const bytes = config.packages.map((p) => ({ session: p.session, bytes: readFileSync(p.path) }));
for (const p of bytes)
  jobs.push(async (url) => {
    await pushPackage(url, p.session, p.bytes, key);
  });
for (let i = 0; i < config.heads; i++)
  jobs.push(async (url) => {
    await sendChainHead(url, key, {
      session: `${config.headSessions ?? 'ses_load'}_${i % 5}`,
      seq: i,
      digest: digest(`load-${i}`),
      time: new Date().toISOString(),
    });
  });

const checkpoints: string[] = [];
const latencies: number[] = [];
let next = 0;
async function worker(w: number): Promise<void> {
  for (;;) {
    const i = next++;
    if (i >= jobs.length) return;
    const url = config.urls[(i + w) % config.urls.length]!;
    const start = process.hrtime.bigint();
    await jobs[i]!(url);
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    const every = config.checkpointEvery ?? 4;
    if (every > 0 && i % every === 0) {
      const other = config.urls[(i + w + 1) % config.urls.length]!;
      checkpoints.push((await hubRequest(hubUrl(other, '/log/checkpoint'))).body.toString('utf8'));
    }
  }
}
const started = process.hrtime.bigint();
await Promise.all(Array.from({ length: config.concurrency }, (_, w) => worker(w)));
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ jobs: jobs.length, seconds, checkpoints, latencies })}\n`);
