/**
 * runAgent: one real agent CLI, run once, fully offline. Each run gets a fresh temp root holding its
 * HOME, TMPDIR, XDG dirs and the agent's own state dirs; a minimal environment (never the parent's);
 * stdin from /dev/null; a scripted model server and an egress sink on 127.0.0.1. The agent's whole
 * process tree is killed when it exits or times out, and the temp root is removed before returning.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { type EgressAttempt, startEgressSink } from './egress.js';
import { type AgentName, ensureAgent } from './install.js';
import type { ScriptInput } from './model/script.js';
import type { ModelRequest } from './model/server.js';
import { PROFILES } from './profiles/index.js';
import {
  forgetMarker,
  killRun,
  killRunAndWait,
  MARKER_VAR,
  makeTempDir,
  registerMarker,
  removeTempDir,
} from './temp.js';

export interface RunOptions {
  agent: AgentName;
  /** The project directory the agent works in (see makeRepo). */
  cwd: string;
  prompt: string;
  script: ScriptInput;
  /** Merged over the harness's settings/config for the agent (its main settings file). */
  settings?: Record<string, unknown>;
  /** Extra files, by path relative to the run's HOME (or absolute), e.g. hooks or plugins. */
  files?: Record<string, string>;
  /** Extra environment variables for the agent (on top of the minimal one). */
  env?: Record<string, string>;
  /** Extra command line arguments, after the harness's own. */
  args?: string[];
  /** Add the agent's "run tools without asking" flag or setting (default true). */
  permissive?: boolean;
  /** Output format where the agent has several (Claude Code: 'json' | 'stream-json'). */
  outputFormat?: string;
  /** Kill the agent after this long (default 120 s). */
  timeoutMs?: number;
  /** Kill the agent when this aborts (a test that has seen what it waited for, or is ending). */
  signal?: AbortSignal;
  /** Directories (relative to HOME) whose text files are read into the result before cleanup. */
  collect?: string[];
  /**
   * Codex: trust the configured hooks the way a person does in its /hooks screen (through its
   * app-server), so they run without --dangerously-bypass-hook-trust. Ignored by other agents.
   */
  trustHooks?: boolean;
  /**
   * Runs once the run's files are written, before the agent starts, with its binary and
   * environment (after the profile's own step); what it returns is the result's `setup`.
   */
  beforeSpawn?: (bin: string, env: Record<string, string>) => Promise<unknown>;
  /**
   * Runs the agent through another command (e.g. `tally run -- <agent>`): given the agent's binary
   * and arguments, returns the program and arguments actually spawned, in the same environment.
   */
  wrap?: (bin: string, argv: string[]) => [string, string[]];
}

export interface AgentRun {
  agent: AgentName;
  version: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Killed because options.signal aborted. */
  aborted: boolean;
  stdout: string;
  stderr: string;
  /** The agent's JSON output where it prints one document (Claude Code json, Gemini, Qwen). */
  json?: unknown;
  /** The agent's JSON lines where it prints a stream (stream-json, Codex --json, OpenCode). */
  events?: unknown[];
  requests: ModelRequest[];
  /** Model requests the scripted server could not answer. */
  unexpectedRequests: ModelRequest[];
  egress: EgressAttempt[];
  /** The run's temp root and HOME while it ran (removed now): payload paths point inside them. */
  root: string;
  home: string;
  /** Files read from `collect`, by path relative to HOME. */
  collected: Record<string, string>;
  /**
   * What `beforeSpawn` returned, else what the profile's set-up step reported (Codex with
   * trustHooks: its hooks as listed after).
   */
  setup?: unknown;
  durationMs: number;
}

/** The environment every agent gets: nothing from the parent but PATH's essentials. */
function baseEnv(root: string, home: string, tmp: string, marker: string): Record<string, string> {
  const nodeDir = dirname(process.execPath);
  return {
    PATH: `${nodeDir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    USER: 'root',
    LOGNAME: 'root',
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    TMPDIR: tmp,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_RUNTIME_DIR: join(root, 'run'),
    [MARKER_VAR]: marker,
  };
}

function collectFiles(home: string, dirs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const path = join(dir, name);
      const st = statSync(path, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(path);
      else if (st?.isFile() && st.size < 4 * 1024 * 1024)
        out[relative(home, path)] = readFileSync(path, 'utf8');
    }
  };
  for (const d of dirs) walk(join(home, d));
  return out;
}

export function writeFiles(base: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = isAbsolute(path) ? path : join(base, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
}

export async function runAgent(options: RunOptions): Promise<AgentRun> {
  const installed = await ensureAgent(options.agent);
  const profile = PROFILES[options.agent];
  const root = makeTempDir(`run-${options.agent}`);
  const home = join(root, 'home');
  const tmp = join(root, 'tmp');
  for (const d of [home, tmp]) mkdirSync(d, { recursive: true });
  mkdirSync(join(root, 'run'), { mode: 0o700 });
  const marker = randomUUID();
  registerMarker(marker);
  const model = await profile.startModel(options.script);
  const egress = await startEgressSink();
  try {
    const ctx = {
      root,
      home,
      tmp,
      cwd: options.cwd,
      prompt: options.prompt,
      modelUrl: model.url,
      settings: options.settings ?? {},
      permissive: options.permissive ?? true,
      outputFormat: options.outputFormat,
      trustHooks: options.trustHooks ?? false,
    };
    const prepared = profile.prepare(ctx);
    writeFiles(home, prepared.files);
    writeFiles(home, options.files ?? {});
    const env = { ...baseEnv(root, home, tmp, marker), ...egress.env, ...prepared.env, ...options.env };
    const argv = [...prepared.args, ...(options.args ?? [])];
    const prepare = profile.beforeSpawn ? await profile.beforeSpawn(ctx, installed.bin, env) : undefined;
    const setup = options.beforeSpawn ? await options.beforeSpawn(installed.bin, env) : prepare;
    const started = Date.now();
    const [program, programArgs] = options.wrap ? options.wrap(installed.bin, argv) : [installed.bin, argv];
    const child = spawn(program, programArgs, {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so the agent and what it starts can be killed together.
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killRun(child.pid, marker);
    }, options.timeoutMs ?? 120_000);
    let aborted = false;
    const abort = (): void => {
      aborted = true;
      killRun(child.pid, marker);
    };
    if (options.signal?.aborted) abort();
    else options.signal?.addEventListener('abort', abort, { once: true });
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(
      (resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (code, sig) => resolve([code, sig]));
      },
    );
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', abort);
    // Whatever the agent left running (servers, shells) goes with it, which also closes its pipes.
    await killRunAndWait(child.pid, marker);
    // A grandchild that escaped both the group and the marker could hold the pipes open forever.
    const grace = new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref());
    await Promise.race([closed, grace]);
    child.stdout.destroy();
    child.stderr.destroy();
    const parsed = profile.parse(stdout, options.outputFormat);
    return {
      agent: options.agent,
      version: installed.version,
      exitCode,
      signal,
      timedOut,
      aborted,
      stdout,
      stderr,
      ...parsed,
      requests: model.requests,
      unexpectedRequests: model.unexpected,
      egress: egress.attempts,
      root,
      home,
      collected: collectFiles(home, options.collect ?? []),
      setup,
      durationMs: Date.now() - started,
    };
  } finally {
    await killRunAndWait(undefined, marker);
    forgetMarker(marker);
    await Promise.all([model.close(), egress.close()]);
    removeTempDir(root);
  }
}

export { jsonLines } from './profiles/types.js';
