/**
 * A whole scripted session of one real agent CLI (31 tool calls: writes, edits, shell commands,
 * reads), run alone, with `tally run`'s hook set answered by nothing (null-hooks.ts: the floor of
 * any capture through those hooks) and under `tally run` (hooks, recorder, close, verify),
 * alternately, three times each: the ratio of the medians (target ≤ 1.15), the floor's ratio and
 * Tally's against the floor, Tally's fixed costs apart (recorder start,
 * session start, seal, verify, in ms, from `tally run --json`), and the latency Tally adds per
 * hook event: the agent's own time under Tally minus its time alone, over the hook events it sent.
 * Every run must leave the disk as the script says, and no call may be denied, so an agent that
 * skipped calls cannot look fast. Each round also runs the agent under `tally run` with the
 * user's recorder already running (it stays up for an hour when idle, so that is the case after
 * the first session of the hour). One more run under Tally, probed (hook-probe.ts), shows where a
 * hook event's time goes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { RecorderClient } from '../src/recorder/client.js';
import type { AgentName } from '../test/agents/install.js';
import { type Step, text } from '../test/agents/model/script.js';
import { makeRepo } from '../test/agents/repo.js';
import { type AgentRun, runAgent } from '../test/agents/runner.js';
import {
  asRecord,
  packageRecords,
  runSummary,
  tallyProject,
  underTallyRun,
} from '../test/agents/tally-flow.js';
import { stopRecorder } from '../test/agents/tally-run-check.js';
import { makeTempDir, removeTempDir } from '../test/agents/temp.js';
import { type BenchResult, median, spread } from './harness.js';
import { HOOK_LOG_ENV, type ProbedHook } from './hook-probe.js';
import { type FiredHooks, type NullHooks, openNullHooks } from './null-hooks.js';

export const CALLS = 31;
const ROUNDS = 3;

/** One agent's tool calls, in its own tool names and argument shapes (`dir`: the work tree). */
export interface SessionTools {
  write(dir: string, file: string, content: string): Step;
  edit(dir: string, file: string, before: string, after: string): Step;
  shell(dir: string, command: string): Step;
  read(dir: string, file: string): Step;
}

export interface SessionAgent {
  agent: AgentName;
  label: string;
  tools: SessionTools;
  /** The certificate's allow rules, covering every call of the script. */
  allow: readonly string[];
}

/**
 * The script every agent runs: a cycle of write f<i>.txt, edit it, append to log.txt from the
 * shell, read the file back — 8 writes, 8 edits, 8 shell commands and 7 reads, then a final text.
 */
export function sessionScript(dir: string, tools: SessionTools): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < CALLS; i++) {
    const file = `f${i - (i % 4)}.txt`;
    const n = i - (i % 4);
    if (i % 4 === 0) steps.push(tools.write(dir, file, `file ${n}\n`));
    else if (i % 4 === 1) steps.push(tools.edit(dir, file, `file ${n}`, `file ${n} edited`));
    else if (i % 4 === 2) steps.push(tools.shell(dir, `echo step ${i} >> log.txt`));
    else steps.push(tools.read(dir, file));
  }
  steps.push(text('Done.'));
  return steps;
}

/** Throws unless the work tree holds what the script leaves: every file written and edited, every line. */
export function checkDisk(dir: string, what: string): void {
  for (let n = 0; n < CALLS; n += 4) {
    const got = readFileSync(join(dir, `f${n}.txt`), 'utf8');
    if (got !== `file ${n} edited\n`) throw new Error(`${what}: f${n}.txt holds ${JSON.stringify(got)}`);
  }
  const lines = readFileSync(join(dir, 'log.txt'), 'utf8').split('\n').filter(Boolean).length;
  if (lines !== Math.ceil((CALLS - 2) / 4)) throw new Error(`${what}: log.txt has ${lines} lines`);
}

export interface SessionMeasure {
  alone: number[];
  /** With tally run's hook set answered by nothing. */
  floor: number[];
  /** The hooks that fired in each floor run. */
  fired: FiredHooks[];
  withTally: number[];
  /** Under `tally run` with the recorder already running. */
  warm: number[];
  agentUnder: number[];
  fixed: Record<'recorder_ms' | 'session_ms' | 'seal_ms' | 'verify_ms', number[]>;
  /** Hook events recorded in each run under Tally. */
  hooks: number[];
  /** The machine's 1-minute load average before and after. */
  load: [number, number];
}

interface OneRun {
  run: AgentRun;
  fired?: FiredHooks;
  timings?: Record<string, number>;
  hooks?: number;
  /** The hook records of the package: [event.time, record.time] in ms since the epoch. */
  recorded?: [number, number][];
  /** Hook events by native event name. */
  events?: Record<string, number>;
  probed?: ProbedHook[];
}

function nativeEvent(record: Record<string, unknown>): string {
  const native = asRecord(asRecord(asRecord(record.event)?.extensions)?.['dev.tally.native']);
  return String(native?.event ?? asRecord(record.event)?.type);
}

function countBy(names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = (out[n] ?? 0) + 1;
  return out;
}

/**
 * How the agent is run: alone, with the null hook set, or under `tally run` — the recorder started
 * by it (cold), already running (warm), or cold and probed.
 */
type Mode = 'alone' | 'floor' | 'cold' | 'warm' | 'probed';

async function once(a: SessionAgent, mode: Mode): Promise<OneRun> {
  const under = mode === 'cold' || mode === 'warm' || mode === 'probed';
  const probe = mode === 'probed';
  const repo = makeRepo({ files: { 'README.md': '# bench\n' } });
  const home = makeTempDir('bench-home');
  const hookLog = join(home, 'hooks.jsonl');
  let floor: NullHooks | undefined;
  try {
    if (mode === 'floor') floor = await openNullHooks(a.agent, repo.dir);
    const project = under
      ? await tallyProject(
          repo.dir,
          home,
          a.allow.flatMap((rule) => ['--allow', rule]),
        )
      : undefined;
    if (project && mode === 'warm') {
      const client = await RecorderClient.of(project.env.TALLY_HOME!, project.env);
      await client.ensure({ env: project.env });
    }
    const run = await runAgent({
      agent: a.agent,
      cwd: repo.dir,
      prompt: 'Do the steps.',
      script: sessionScript(repo.dir, a.tools),
      ...floor?.options,
      ...(project
        ? {
            env: {
              TALLY_HOME: project.env.TALLY_HOME!,
              ...(probe
                ? {
                    NODE_OPTIONS: `--import=${new URL('hook-probe.js', import.meta.url).href}`,
                    [HOOK_LOG_ENV]: hookLog,
                  }
                : {}),
            },
            wrap: underTallyRun,
          }
        : {}),
    });
    const what = `${a.label} ${under ? 'under tally run' : floor ? 'with null hooks' : 'alone'}`;
    if (run.exitCode !== 0) throw new Error(`${what} exited ${run.exitCode}: ${run.stderr.slice(-800)}`);
    checkDisk(repo.dir, what);
    if (floor) return { run, fired: floor.fired() };
    if (!project) return { run };
    const summary = runSummary(run.stdout);
    if (summary.verified !== true) throw new Error(`${what}: did not verify: ${JSON.stringify(summary)}`);
    const hooks = packageRecords(String(summary.package)).filter((r) => r.source === 'hook');
    const denied = hooks.filter((r) => asRecord(r.decision)?.decision === 'deny');
    if (denied.length > 0) throw new Error(`${what}: denied ${JSON.stringify(denied[0]!.event)}`);
    return {
      run,
      timings: summary.timings as Record<string, number>,
      hooks: hooks.length,
      recorded: hooks.map((r) => [Date.parse(String(asRecord(r.event)?.time)), Date.parse(String(r.time))]),
      events: countBy(hooks.map((r) => nativeEvent(r))),
      // The sh shim starts no node process to probe: then nothing was logged.
      probed:
        probe && existsSync(hookLog)
          ? readFileSync(hookLog, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as ProbedHook)
          : [],
    };
  } finally {
    await floor?.close();
    if (under) await stopRecorder(repo.dir, home);
    repo.cleanup();
    removeTempDir(home);
  }
}

/**
 * Throws unless the null hooks fired at least as often as `tally run` recorded hook events in the
 * same round: the same hook set in the same session, so fewer means some did not run.
 */
function checkFloor(a: SessionAgent, fired: FiredHooks, under: OneRun): void {
  if (fired.requests + fired.commands >= under.hooks!) return;
  throw new Error(
    `${a.label} with null hooks: ${fired.requests + fired.commands} hook events fired (${JSON.stringify(fired.events)}), ${under.hooks} recorded under tally run (${JSON.stringify(under.events)})`,
  );
}

/** Three rounds of the agent alone, with null hooks and under `tally run`, alternately. */
export async function measureSession(a: SessionAgent): Promise<SessionMeasure> {
  const m: SessionMeasure = {
    alone: [],
    floor: [],
    fired: [],
    withTally: [],
    warm: [],
    agentUnder: [],
    fixed: { recorder_ms: [], session_ms: [], seal_ms: [], verify_ms: [] },
    hooks: [],
    load: [loadavg()[0]!, 0],
  };
  for (let round = 0; round < ROUNDS; round++) {
    m.alone.push((await once(a, 'alone')).run.durationMs);
    const floor = await once(a, 'floor');
    m.floor.push(floor.run.durationMs);
    m.fired.push(floor.fired!);
    const under = await once(a, 'cold');
    checkFloor(a, floor.fired!, under);
    m.withTally.push(under.run.durationMs);
    m.agentUnder.push(under.timings!.agent_ms!);
    for (const k of Object.keys(m.fixed) as (keyof SessionMeasure['fixed'])[])
      m.fixed[k].push(under.timings![k]!);
    m.hooks.push(under.hooks!);
    m.warm.push((await once(a, 'warm')).run.durationMs);
  }
  m.load[1] = loadavg()[0]!;
  return m;
}

const ms = (xs: number[]) => `${median(xs).toFixed(0)} ms (${spread(xs)})`;
/** A count over the rounds: the number, or its range when the rounds differ. */
const counted = (xs: number[]) => (Math.min(...xs) === Math.max(...xs) ? `${xs[0]}` : spread(xs));

/** What fired in the floor runs, e.g. "65 http requests, 1 command run". */
function firedText(fired: FiredHooks[]): string {
  const requests = counted(fired.map((f) => f.requests));
  const commands = counted(fired.map((f) => f.commands));
  return `${requests} http request${requests === '1' ? '' : 's'}, ${commands} command run${commands === '1' ? '' : 's'}`;
}

/** The rows of one agent's session: ratio, the null-hook floor, fixed costs, added latency per hook event. */
export function sessionResults(label: string, m: SessionMeasure): BenchResult[] {
  const hooks = median(m.hooks);
  const perHook = (median(m.agentUnder) - median(m.alone)) / Math.max(1, hooks);
  const overFloor = (median(m.agentUnder) - median(m.floor)) / Math.max(1, hooks);
  const fixed = (k: keyof SessionMeasure['fixed']) => median(m.fixed[k]).toFixed(0);
  return [
    {
      name: `${label}: whole session, ${CALLS} tool calls, tally run vs the agent alone (median of ${ROUNDS}; load ${m.load.map((l) => l.toFixed(1)).join(' → ')})`,
      measured: ms(m.withTally),
      baseline: `alone ${ms(m.alone)}`,
      ratio: median(m.withTally) / median(m.alone),
      target: '<= 1.15',
    },
    {
      name: `${label}: whole session with tally run's hook set answered by nothing (${firedText(m.fired)} a session; median of ${ROUNDS})`,
      measured: ms(m.floor),
      baseline: `alone ${ms(m.alone)}`,
      ratio: median(m.floor) / median(m.alone),
      target: 'report: the floor of hook-based capture',
    },
    {
      name: `${label}: tally run vs that null-hook floor (the agent's own time under Tally ${median(m.agentUnder).toFixed(0)} ms: ${overFloor.toFixed(1)} ms per hook event over the floor)`,
      measured: ms(m.withTally),
      baseline: `null hooks ${ms(m.floor)}`,
      ratio: median(m.withTally) / median(m.floor),
      target: 'report',
    },
    {
      name: `${label}: whole session, tally run with the user's recorder already running (median of ${ROUNDS})`,
      measured: ms(m.warm),
      baseline: `alone ${ms(m.alone)}`,
      ratio: median(m.warm) / median(m.alone),
      target: 'report',
    },
    {
      name: `${label}: fixed costs: recorder ${fixed('recorder_ms')} ms, session ${fixed('session_ms')} ms, seal ${fixed('seal_ms')} ms, verify ${fixed('verify_ms')} ms`,
      measured: `${ms(m.agentUnder)} agent under tally`,
      baseline: `alone ${median(m.alone).toFixed(0)} ms`,
      ratio: median(m.agentUnder) / median(m.alone),
      target: 'report',
    },
    {
      name: `${label}: added latency per recorded hook event (${hooks} hook events${spread(m.hooks) === `${hooks}–${hooks}` ? '' : `, ${spread(m.hooks)}`})`,
      measured: `${perHook.toFixed(1)} ms`,
      baseline: 'the agent alone',
      ratio: perHook,
      target: 'report',
    },
  ];
}

/**
 * One probed run under Tally: per hook event, the recorder's own time (its event's time to its
 * record's, judge and signature included), and for hooks that are a `tally hook` process, that
 * process's life: node start to the request, the request to the recorder, the answer to exit.
 */
export async function probeSession(a: SessionAgent): Promise<BenchResult[]> {
  const probed = await once(a, 'probed');
  const inRecorder = probed.recorded!.map(([event, record]) => record - event);
  const mean = inRecorder.reduce((s, x) => s + x, 0) / Math.max(1, inRecorder.length);
  const events = Object.entries(probed.events!)
    .sort((x, y) => y[1] - x[1])
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  const rows: BenchResult[] = [
    {
      name: `${a.label}: recorder, event prepared to recorded, mean per hook event (probed run, ${inRecorder.length}: ${events})`,
      measured: `${mean.toFixed(1)} ms (${spread(inRecorder)})`,
      baseline: 'ms timestamps of the records',
      ratio: mean,
      target: 'report',
    },
  ];
  const shims = probed.probed!.filter((p) => p.sentMs !== undefined && p.answeredMs !== undefined);
  if (shims.length === 0) return rows;
  const boot = shims.map((p) => p.sentMs!);
  const request = shims.map((p) => p.answeredMs! - p.sentMs!);
  const life = shims.map((p) => p.exitMs);
  rows.push({
    name: `${a.label}: tally hook process (${shims.length}): node start to request ${median(boot).toFixed(1)} ms, request to the recorder ${median(request).toFixed(1)} ms (${spread(request)}), answer to exit ${(median(life) - median(boot) - median(request)).toFixed(1)} ms`,
    measured: `${median(life).toFixed(1)} ms (${spread(life)}) per hook process`,
    baseline: 'node start to exit',
    ratio: median(life),
    target: 'report',
  });
  return rows;
}
