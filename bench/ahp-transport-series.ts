/**
 * The AHP transport series, by percentile, against the raw round trip of the same transport in
 * the same run (a bare `node:http` echo server over a keep-alive agent; a bare echo child over
 * stdio). Four series per transport: two floors that show what any conforming exchange costs
 * (`FloorKind`: JSON only; strict parsing and validation on both sides), `transport.request`
 * alone (transport + backend kit), and end to end through a `Dispatcher` (matching, content
 * selection, deadline, validation, staging, settlement, plus the transport). All are sampled in
 * alternation with the raw round trip, one call each per round, then again in bursts
 * (`sampleRounds`). A `per_event` stdio call is compared with spawning `node -e ''` and waiting
 * for it to exit, and with spawning the same backend by hand, sending it the request and waiting
 * for it to exit; both with the environment the transport gives a backend.
 *
 * Used twice by ./ahp-transport.bench.ts: in its own process (the scheduler places the harness and
 * the backend processes freely) and in ./programs/ahp-transport.ts pinned to one CPU.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBackend } from '../src/ahp/backend/kit.js';
import type { InterceptCapabilities } from '../src/ahp/harness/compose.js';
import { Dispatcher } from '../src/ahp/harness/dispatcher.js';
import type { Backend } from '../src/ahp/registration/types.js';
import { createTransport, type TransportOptions } from '../src/ahp/transports/index.js';
import { fileSecretProvider } from '../src/ahp/transports/secrets.js';
import { backendEnvironment } from '../src/ahp/transports/stdio-process.js';
import type { CanonicalEvent } from '../src/core/event.js';
import { interceptRequest as request } from '../test/ahp/transport-helpers.js';
import { interceptSubscription } from './ahp-fixtures.js';
import { type FloorKind, floorAnswer, floorClient } from './ahp-floor.js';
import { type BenchResult, percentile } from './harness.js';

const TALLY = fileURLToPath(new URL('../../bin/tally.js', import.meta.url));
const FAULT_BACKEND = fileURLToPath(new URL('../test/ahp/backends/fault-backend.js', import.meta.url));
const FLOOR_BACKEND = fileURLToPath(new URL('./programs/ahp-floor-backend.js', import.meta.url));
const ECHO_CHILD = "process.stdin.on('data', (c) => process.stdout.write(c));";
/** Appended to every row name, e.g. ', one CPU', to tell the placements apart. */
let placement = '';
export function setPlacement(label: string): void {
  placement = label;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * Samples every series in alternation, `block` consecutive calls each per round, so a load spike
 * moves every distribution instead of one. With one call per round (the primary rows) each call
 * meets caches the other series' processes have just used, as an intercept between an agent's
 * model turns does; a block of BURST calls (the burst rows) measures a run of intercepts back to
 * back, with warm caches.
 */
async function sampleRounds(
  iterations: number,
  warmup: number,
  series: readonly (() => Promise<unknown>)[],
  block = 1,
): Promise<number[][]> {
  for (let i = 0; i < warmup; i++) for (const fn of series) await fn();
  const out = series.map(() => [] as number[]);
  for (let i = 0; i < iterations; i += block) {
    for (const [k, fn] of series.entries()) for (let j = 0; j < block; j++) out[k]?.push(await timed(fn));
  }
  for (const samples of out) samples.sort((a, b) => a - b);
  return out;
}

/** Consecutive calls of one series per round in the burst rows. */
const BURST = 16;

/** What every transport series measures, in the order `measureTransport` takes them. */
const SERIES_NAMES = [
  'minimal JSON-RPC floor (no Tally)',
  'required-work floor (strict parse + validation both sides)',
  'transport.request only',
  'end to end via Dispatcher',
] as const;

/**
 * The rows of one transport: each series against the raw round trip `raw` sampled in the same
 * rounds, one call per round (p50 and p99) and in bursts (p50).
 */
async function measureTransport(
  label: string,
  what: string,
  raw: () => Promise<unknown>,
  series: readonly (() => Promise<unknown>)[],
): Promise<BenchResult[]> {
  const [rawSpread = [], ...spread] = await sampleRounds(3000, 300, [raw, ...series]);
  const [rawBurst = [], ...burst] = await sampleRounds(3000, 0, [raw, ...series], BURST);
  return SERIES_NAMES.flatMap((name, i) => [
    ...results(`${label}, ${name}`, spread[i] ?? [], rawSpread, what),
    ...results(`${label}, ${name}, bursts of ${BURST}`, burst[i] ?? [], rawBurst, what, [50]),
  ]);
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`),
    ),
  );
}

function rawPost(agent: http.Agent, url: string, body: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The backend side of an HTTP floor, in this process like the raw echo server. */
function floorServer(kind: FloorKind): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = floorAnswer(kind, Buffer.concat(chunks));
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) })
        .end(answer);
    });
  });
}

const env = { ...process.env, TALLY_HOME: mkdtempSync(join(tmpdir(), 'tally-bench-')) };
const options = { secrets: fileSecretProvider(env), env };
const never = new AbortController().signal;

/**
 * A dispatcher with one intercept subscription to `backend` on `tool.before` (its own transport,
 * so it does not share a connection with the transport-only rows).
 */
function benchDispatcher(backend: Backend, transportOptions: TransportOptions = options): Dispatcher {
  const subscribed: Backend = {
    ...backend,
    subscriptions: [interceptSubscription()],
  };
  return new Dispatcher({
    registration: { protocolVersion: 'draft', hooks: [subscribed] },
    transportFactory: (b) => createTransport(b, transportOptions),
  });
}

/** One intercept through the whole dispatcher; a failed or rejected call would not be a fair sample. */
async function dispatchOne(dispatcher: Dispatcher): Promise<void> {
  const { event, capabilities } = request().params as {
    event: CanonicalEvent;
    capabilities: InterceptCapabilities;
  };
  const outcome = await dispatcher.dispatch({ event, capabilities });
  const status = outcome.subscriptions[0]?.status;
  if (status !== 'accepted')
    throw new Error(`bench intercept was ${status}: ${outcome.subscriptions[0]?.reason}`);
}

function results(
  name: string,
  measured: number[],
  raw: number[],
  what: string,
  percentiles: readonly number[] = [50, 99],
): BenchResult[] {
  const fmt = (v: number) => `${(v * 1000).toFixed(0)} µs`;
  return percentiles.map((p) => ({
    name: `${name}${placement} p${p}`,
    measured: `${fmt(percentile(measured, p))} per intercept (${fmt(percentile(measured, p) - percentile(raw, p))} added)`,
    baseline: `${what} ${fmt(percentile(raw, p))}`,
    ratio: percentile(measured, p) / percentile(raw, p),
    target: p === 50 ? '<= 1.5' : 'report',
  }));
}

export async function httpBench(): Promise<BenchResult[]> {
  const rawServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    });
  });
  const kitServer = http.createServer(createBackend({ intercept: () => [] }).http);
  const floors = { minimal: floorServer('minimal'), required: floorServer('required') };
  const rawUrl = await listen(rawServer);
  const kitUrl = await listen(kitServer);
  const floorUrls = { minimal: await listen(floors.minimal), required: await listen(floors.required) };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const floorAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const floorPost = (kind: FloorKind) => {
    const client = floorClient(kind);
    return async () => {
      const message = request();
      client.receive(await rawPost(floorAgent, floorUrls[kind], client.send(message)), message);
    };
  };
  const backend: Backend = {
    index: 0,
    id: 'org.tally.bench.http',
    transport: { kind: 'http', url: kitUrl },
    subscriptions: [],
  };
  const transport = createTransport(backend, options);
  const dispatcher = benchDispatcher(backend);
  try {
    return await measureTransport(
      'HTTP keep-alive',
      'raw node:http echo',
      () => rawPost(agent, rawUrl, JSON.stringify(request())),
      [
        floorPost('minimal'),
        floorPost('required'),
        () => transport.request(request(), never),
        () => dispatchOne(dispatcher),
      ],
    );
  } finally {
    agent.destroy();
    floorAgent.destroy();
    await transport.close();
    await dispatcher.close();
    for (const server of [kitServer, rawServer, floors.minimal, floors.required]) {
      server.close();
      server.closeAllConnections();
    }
  }
}

/** A floor's backend child (one answer line per chunk) and the round trip to it. */
function floorChild(kind: FloorKind) {
  const child = spawn(process.execPath, [FLOOR_BACKEND, kind], { stdio: ['pipe', 'pipe', 'inherit'] });
  const client = floorClient(kind);
  let answered: ((line: Buffer) => void) | undefined;
  child.stdout.on('data', (line: Buffer) => answered?.(line));
  const roundTrip = () =>
    new Promise<void>((resolve, reject) => {
      const message = request();
      answered = (line) => {
        try {
          client.receive(line, message);
          resolve();
        } catch (error) {
          reject(error);
        }
      };
      child.stdin.write(`${client.send(message)}\n`);
    });
  return { roundTrip, pid: child.pid ?? 0, end: () => child.stdin.end() };
}

/** A raw echo child, a transport and a dispatcher to `tally ahp serve --stdio`, and their pids. */
async function stdioSetup() {
  const echo = spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  let waiting: (() => void) | undefined;
  let buffered = '';
  echo.stdout.setEncoding('utf8');
  echo.stdout.on('data', (c: string) => {
    buffered += c;
    if (buffered.endsWith('\n')) {
      buffered = '';
      waiting?.();
    }
  });
  const rawRoundTrip = () =>
    new Promise<void>((resolve) => {
      waiting = resolve;
      echo.stdin.write(`${JSON.stringify(request())}\n`);
    });
  const minimal = floorChild('minimal');
  const required = floorChild('required');
  const rules = join(mkdtempSync(join(tmpdir(), 'tally-bench-')), 'rules.json');
  writeFileSync(rules, JSON.stringify({ rules: [] }));
  const backend: Backend = {
    index: 0,
    id: 'org.tally.bench.stdio',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [TALLY, 'ahp', 'serve', '--stdio', '--rules', rules],
      lifecycle: 'persistent',
      env: {},
    },
    subscriptions: [],
  };
  // The backends' pids, from the transports' 'backend started' lines: transport first.
  const pids: number[] = [];
  const logged = {
    ...options,
    logger: (_level: string, message: string, fields?: Record<string, unknown>) => {
      if (message === 'backend started' && typeof fields?.pid === 'number') pids.push(fields.pid);
    },
  };
  const transport = createTransport(backend, logged);
  const dispatcher = benchDispatcher(backend, logged);
  const sent = () => transport.request(request(), never);
  const dispatched = () => dispatchOne(dispatcher);
  // Start both backends before anything is timed.
  await sent();
  await dispatched();
  return {
    rawRoundTrip,
    minimalRoundTrip: minimal.roundTrip,
    requiredRoundTrip: required.roundTrip,
    sent,
    dispatched,
    pids: {
      echo: echo.pid ?? 0,
      minimal: minimal.pid,
      required: required.pid,
      transport: pids[0] ?? 0,
      dispatcher: pids[1] ?? 0,
    },
    async close() {
      echo.stdin.end();
      minimal.end();
      required.end();
      await transport.close();
      await dispatcher.close();
    },
  };
}

export async function stdioBench(): Promise<BenchResult[]> {
  const setup = await stdioSetup();
  try {
    return await measureTransport('stdio persistent', 'raw echo child', setup.rawRoundTrip, [
      setup.minimalRoundTrip,
      setup.requiredRoundTrip,
      setup.sent,
      setup.dispatched,
    ]);
  } finally {
    await setup.close();
  }
}

/** CPU time (user + system, µs) a process has used so far, from /proc (Linux). */
function processCpuMicros(pid: number, tick: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / tick;
}

/**
 * CPU time per stdio intercept, both processes together (harness + backend), against the raw echo
 * loop's: the work done per intercept, whatever the placement. Each series runs back to back.
 * Linux only (/proc); used by the one-CPU program.
 */
export async function stdioCpuBench(): Promise<BenchResult[]> {
  const tick = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const setup = await stdioSetup();
  const calls = 20_000;
  const measure = async (fn: () => Promise<unknown>, pid: number) => {
    for (let i = 0; i < 1000; i++) await fn();
    const harness = process.cpuUsage();
    const child = processCpuMicros(pid, tick);
    for (let i = 0; i < calls; i++) await fn();
    const used = process.cpuUsage(harness);
    return {
      harness: (used.user + used.system) / calls,
      backend: (processCpuMicros(pid, tick) - child) / calls,
    };
  };
  try {
    const raw = await measure(setup.rawRoundTrip, setup.pids.echo);
    const rows: [string, { harness: number; backend: number }][] = [
      ['minimal JSON-RPC floor (no Tally)', await measure(setup.minimalRoundTrip, setup.pids.minimal)],
      [
        'required-work floor (strict parse + validation both sides)',
        await measure(setup.requiredRoundTrip, setup.pids.required),
      ],
      ['transport.request only', await measure(setup.sent, setup.pids.transport)],
      ['end to end via Dispatcher', await measure(setup.dispatched, setup.pids.dispatcher)],
    ];
    const total = (v: { harness: number; backend: number }) => v.harness + v.backend;
    const fmt = (v: { harness: number; backend: number }) =>
      `${total(v).toFixed(1)} µs (harness ${v.harness.toFixed(1)} + backend ${v.backend.toFixed(1)})`;
    return rows.map(([name, v]) => ({
      name: `stdio persistent, ${name}, CPU time per intercept`,
      measured: fmt(v),
      baseline: `raw echo loop ${fmt(raw)}`,
      ratio: total(v) / total(raw),
      target: 'report',
    }));
  } finally {
    await setup.close();
  }
}

export async function perEventBench(): Promise<BenchResult[]> {
  // Both baselines get the environment the transport gives a backend: spawned with this
  // process's whole environment instead, Node start-up can cost twice as much (NODE_EXTRA_CA_CERTS
  // alone loads a certificate bundle), which would flatter the ratio.
  const bareEnv = backendEnvironment({}, env);
  const args = [FAULT_BACKEND, 'one-shot', '0'];
  /** Spawns node with `argv`, writes `input` (if any) and ends stdin, resolves at exit. */
  const run = (argv: string[], input?: string) =>
    new Promise<void>((resolve) => {
      const child = spawn(process.execPath, argv, { stdio: ['pipe', 'ignore', 'ignore'], env: bareEnv });
      child.on('exit', () => resolve());
      child.stdin.end(input);
    });
  const backend: Backend = {
    index: 0,
    id: 'org.tally.bench.perevent',
    transport: { kind: 'stdio', command: process.execPath, args, lifecycle: 'per_event', env: {} },
    subscriptions: [],
  };
  const transport = createTransport(backend, options);
  const [bare = [], byHand = [], measured = []] = await sampleRounds(20, 3, [
    () => run(['-e', '']),
    () => run(args, `${JSON.stringify(request())}\n`),
    () => transport.request(request(), never),
  ]);
  await transport.close();
  const p50 = (v: number[]) => percentile(v, 50);
  const row = (name: string, baseline: string, base: number[]): BenchResult => ({
    name,
    measured: `${p50(measured).toFixed(1)} ms per call`,
    baseline: `${baseline} ${p50(base).toFixed(1)} ms`,
    ratio: p50(measured) / p50(base),
    target: 'report',
  });
  return [
    row('stdio per_event intercept p50', "bare node -e '' spawn", bare),
    row(
      'stdio per_event intercept p50, vs the same backend by hand',
      'the backend spawned, sent the request, run to exit',
      byHand,
    ),
  ];
}
