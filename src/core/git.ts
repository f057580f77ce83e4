/**
 * git run on a repository someone else can write, without ever waiting on it for good. The agent
 * can make git block (a FIFO at `.git/config` or `.git/index`, a config that names a slow helper),
 * so every git Tally runs for a long-lived process is asynchronous, has a deadline
 * (`TALLY_GIT_TIMEOUT_MS`, ten seconds unless set), and is killed at it — with every process it
 * started, since it runs in a process group of its own — and its caller gets a `GitError` saying so.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { TallyError } from './errors.js';

export type GitErrorCode = 'timeout' | 'failed' | 'missing' | 'too-much-output' | 'bad-timeout';

/** `detail`: `args`, `cwd`, and `timeout_ms`, `exit`/`signal` or `stderr` as they apply. */
export class GitError extends TallyError<GitErrorCode> {}

export const GIT_TIMEOUT_ENV = 'TALLY_GIT_TIMEOUT_MS';
export const DEFAULT_GIT_TIMEOUT_MS = 10_000;
/** The most output kept from one git command unless the caller says otherwise. */
const DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024;
/** The most of git's stderr a message quotes. */
const STDERR_KEPT = 2048;

/** The deadline of one git command: `TALLY_GIT_TIMEOUT_MS` (a whole number of milliseconds) or the default. */
export function gitTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[GIT_TIMEOUT_ENV];
  if (text === undefined || text === '') return DEFAULT_GIT_TIMEOUT_MS;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1)
    throw new GitError(
      'bad-timeout',
      `${GIT_TIMEOUT_ENV}: '${text.slice(0, 40)}' is not a whole number of milliseconds above 0`,
      { field: GIT_TIMEOUT_ENV },
    );
  return value;
}

/**
 * The variables that say where git finds the user's and the system's config (git-config(1),
 * FILES). A reconciliation keeps those of its start for its close: the settings compared are then
 * read from the same files, whichever process closes.
 */
export const CONFIG_PLACES = [
  'HOME',
  'XDG_CONFIG_HOME',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
] as const;
export type ConfigPlaces = Partial<Record<(typeof CONFIG_PLACES)[number], string>>;

/** The config places `env` sets (a variable set to nothing is set, as git reads it). */
export function configPlaces(env: NodeJS.ProcessEnv = process.env): ConfigPlaces {
  const places: ConfigPlaces = {};
  for (const name of CONFIG_PLACES) if (env[name] !== undefined) places[name] = env[name];
  return places;
}

/**
 * The environment of git when Tally asks it about a repository: the `PATH` git is found by and
 * where the user's and the system's config are, nothing else. A process started from a git hook or
 * alias, or by whoever set them, carries `GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`,
 * `GIT_CONFIG_PARAMETERS` and the like, which would point git at another repository, index or
 * settings than those of the folder it runs in.
 */
export function repositoryEnv(places: ConfigPlaces = configPlaces()): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...places };
}

export interface GitOptions {
  cwd: string;
  /** The whole environment of the command (default: `repositoryEnv()`). */
  env?: NodeJS.ProcessEnv;
  /** Default: `gitTimeoutMs(process.env)`. */
  timeoutMs?: number;
  /** Bytes of stdout past which the command is stopped and refused. */
  maxOutput?: number;
  /** An open file descriptor git reads as its stdin (default: none). */
  stdin?: number;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Runs `git …args` in `cwd`; resolves with its stdout when it exits 0 within its deadline. */
export async function runGit(args: readonly string[], options: GitOptions): Promise<Buffer> {
  return (await runGitOutput(args, options)).stdout;
}

/** What a git command wrote: its stdout, and its stderr (warnings a caller may read). */
export interface GitOutput {
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * `runGit`, resolving with the stderr too (each bounded by `maxOutput`; stderr past it is dropped,
 * not refused).
 */
export function runGitOutput(args: readonly string[], options: GitOptions): Promise<GitOutput> {
  const timeoutMs = options.timeoutMs ?? gitTimeoutMs();
  const maxOutput = options.maxOutput ?? DEFAULT_MAX_OUTPUT;
  const what = `git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? ''}`.trim();
  const facts = { args: [...args], cwd: options.cwd };
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: options.env ?? repositoryEnv(),
      stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
      // Its own process group: a deadline kills git and whatever git started (a helper, a hook).
      detached: true,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    const errOut: Buffer[] = [];
    let errBytes = 0;
    let err = '';
    let settled = false;
    const finish = (error: GitError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === null)
        return resolve({ stdout: Buffer.concat(out, outBytes), stderr: Buffer.concat(errOut, errBytes) });
      // Stopped, not waited for: a grandchild holding a pipe open must not hold the caller too.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      child.stdout?.destroy();
      child.stderr?.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () =>
        finish(
          new GitError(
            'timeout',
            `${what} in ${options.cwd} did not finish within ${timeoutMs} ms and was stopped (${GIT_TIMEOUT_ENV})`,
            { ...facts, timeout_ms: timeoutMs },
          ),
        ),
      timeoutMs,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxOutput)
        return finish(
          new GitError('too-much-output', `${what} in ${options.cwd} wrote more than ${maxOutput} bytes`, {
            ...facts,
            limit: maxOutput,
          }),
        );
      out.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (err.length < STDERR_KEPT) err += chunk.toString('utf8').slice(0, STDERR_KEPT - err.length);
      if (errBytes + chunk.length > maxOutput) return;
      errOut.push(chunk);
      errBytes += chunk.length;
    });
    child.once('error', (error: NodeJS.ErrnoException) =>
      finish(
        error.code === 'ENOENT' && isDirectory(options.cwd)
          ? new GitError('missing', 'git is not installed (not found on PATH)', facts, { cause: error })
          : new GitError('failed', `${what} in ${options.cwd} could not run: ${error.message}`, facts, {
              cause: error,
            }),
      ),
    );
    child.once('close', (code, signal) => {
      if (code === 0) return finish(null);
      const stderr = err.trim();
      finish(
        new GitError(
          'failed',
          `${what} in ${options.cwd} failed (${signal ?? `exit ${code}`})${stderr ? `: ${stderr.split('\n')[0]}` : ''}`,
          { ...facts, ...(signal ? { signal } : { exit: code }), stderr },
        ),
      );
    });
  });
}
