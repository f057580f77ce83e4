/**
 * What both stdio lifecycles share: the backend's environment, starting the process without a
 * shell, routing its stderr to the logger, splitting stdout into lines under a size bound, and
 * stopping it (close stdin, then SIGTERM, then SIGKILL, each after the grace period).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { parseJson } from '../../core/canonical.js';
import { LineSplitter as CoreLineSplitter, LineTooLongError } from '../../core/lines.js';
import { isUsableEnvName, isUsableEnvValue, pointerTo } from '../registration/check.js';
import type { Logger } from './options.js';
import { TransportError } from './transport.js';

/**
 * Inherited from the harness, when set: what a program needs to find executables, a home, a
 * locale, a time zone and a temp directory. Nothing else (no credentials, no agent variables).
 */
export const INHERITED_ENV_NAMES: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  // Windows loader and shell essentials.
  'SYSTEMROOT',
  'SystemRoot',
  'ComSpec',
  'PATHEXT',
  'TEMP',
  'TMP',
  'USERPROFILE',
]);

/**
 * The smallest practical environment: the inherited names above, then the registration's literal
 * `env` entries on top. Values are used verbatim: `$VAR` or `${VAR}` is not expanded. A name is
 * accepted exactly when registration validation accepts it (non-empty, without `=` or NUL; the
 * shared predicates in ../registration-check.ts), so a valid registration never fails here.
 * `transportPointer` locates the transport in the registration (e.g. `/hooks/0/transport`).
 */
export function backendEnvironment(
  literal: Record<string, string>,
  parent: NodeJS.ProcessEnv,
  transportPointer = '/transport',
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED_ENV_NAMES) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  const envPointer = pointerTo(transportPointer, 'env');
  for (const [name, value] of Object.entries(literal)) {
    const pointer = pointerTo(envPointer, name);
    if (!isUsableEnvName(name)) {
      throw new TransportError(
        'transport',
        `environment name at ${pointer} must be non-empty and contain neither = nor NUL`,
        { pointer },
      );
    }
    if (!isUsableEnvValue(value)) {
      throw new TransportError('transport', `environment value at ${pointer} must be a string without NUL`, {
        pointer,
      });
    }
    env[name] = value;
  }
  return env;
}

export interface ProcessSpec {
  backendId: string;
  /** JSON pointer of the transport in the registration (e.g. `/hooks/0/transport`), for errors. */
  pointer?: string;
  command: string;
  args: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
}

export function startProcess(spec: ProcessSpec, logger: Logger): ChildProcessWithoutNullStreams {
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    shell: false,
    windowsHide: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', () => {
    // EPIPE after the backend exited; the exit handler reports the failure.
  });
  let pending = '';
  const relay = stderrRelay(logger, spec.backendId, child.pid);
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    pending += chunk;
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      relay(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      nl = pending.indexOf('\n');
    }
    if (pending.length > 4096) {
      relay(pending);
      pending = '';
    }
  });
  child.stderr.on('end', () => {
    if (pending !== '') relay(pending);
  });
  return child;
}

/** A backend's stderr relayed to the log: at most this many lines and bytes per window. */
export const STDERR_LIMITS = { lines: 200, bytes: 64 * 1024, windowMs: 60_000 } as const;

/**
 * Relays a backend's stderr lines (clipped) within a budget per window, so a backend cannot flood
 * the harness's log; what is dropped is counted and said once, when the next window opens. (The
 * caller's logger redacts each line: a backend's stderr is its own text.)
 */
function stderrRelay(logger: Logger, backend: string, pid: number | undefined): (line: string) => void {
  let windowStart = Date.now();
  let lines = 0;
  let bytes = 0;
  let dropped = 0;
  return (line) => {
    const now = Date.now();
    if (now - windowStart >= STDERR_LIMITS.windowMs) {
      if (dropped > 0)
        logger(
          'warn',
          `backend stderr: ${dropped} line(s) dropped over the limit of ${STDERR_LIMITS.lines} lines / ${STDERR_LIMITS.bytes} bytes a minute`,
          { backend, pid },
        );
      windowStart = now;
      lines = 0;
      bytes = 0;
      dropped = 0;
    }
    const clipped = clip(line);
    if (lines >= STDERR_LIMITS.lines || bytes + clipped.length > STDERR_LIMITS.bytes) {
      if (dropped === 0)
        logger('warn', 'backend stderr: over its limit; further lines this minute are dropped', {
          backend,
          pid,
        });
      dropped += 1;
      return;
    }
    lines += 1;
    bytes += clipped.length;
    logger('info', 'backend stderr', { backend, pid, line: clipped });
  };
}

function clip(line: string): string {
  return line.length > 4096 ? `${line.slice(0, 4096)}…` : line;
}

/** The core line splitter, failing as the transport does ('too-large') on an over-long line. */
export class LineSplitter {
  private readonly lines: CoreLineSplitter;
  constructor(private readonly limit: number) {
    this.lines = new CoreLineSplitter(limit);
  }

  /** Hands each complete line in `chunk` to `onLine`; throws 'too-large' past the limit. */
  push(chunk: Buffer, onLine: (line: Buffer) => void): void {
    try {
      this.lines.push(chunk, onLine);
    } catch (error) {
      if (!(error instanceof LineTooLongError)) throw error;
      throw new TransportError('too-large', `backend output line exceeds ${this.limit} bytes`, {
        limit: this.limit,
      });
    }
  }

  /** Bytes received after the last newline. */
  get rest(): number {
    return this.lines.rest;
  }
}

/** Parses one stdout line as one JSON-RPC object, or throws 'protocol'. */
export function parseLine(line: Buffer, backendId: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseJson(line);
  } catch {
    throw new TransportError('protocol', `backend ${backendId} wrote a stdout line that is not JSON`, {
      backend: backendId,
      bytes: line.length,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TransportError(
      'protocol',
      `backend ${backendId} wrote a line that is not one JSON-RPC object`,
      {
        backend: backendId,
      },
    );
  }
  return value as Record<string, unknown>;
}

/** Resolves once the child has exited (immediately if it already has). */
export function exited(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
    return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
}

/**
 * Closes our ends of the child's pipes. A process the backend started may have inherited its
 * stdout or stderr and outlive it; until our ends are closed, those open pipes keep the harness
 * process alive after every decision is made.
 */
export function releaseStreams(child: ChildProcessWithoutNullStreams): void {
  child.stdin.destroy();
  child.stdout.destroy();
  child.stderr.destroy();
}

/**
 * How long output is still read after the backend exited while a process it left behind holds
 * its pipes open: what the backend wrote before exiting is already in the pipe.
 */
export const EXIT_DRAIN_MS = 250;

/**
 * After an exit: the child's last output is read until its pipes close, or for EXIT_DRAIN_MS at
 * most when a process it left behind still holds them; then our ends are closed.
 */
export function releaseAfterExit(child: ChildProcessWithoutNullStreams, graceMs = EXIT_DRAIN_MS): void {
  const timer = setTimeout(() => releaseStreams(child), graceMs).unref();
  child.once('close', () => clearTimeout(timer));
}

/**
 * Close stdin, then SIGTERM, then SIGKILL, waiting `graceMs` before each escalation; once the
 * process has exited, our ends of its pipes are closed (`releaseStreams`).
 */
export async function stopProcess(child: ChildProcessWithoutNullStreams, graceMs: number): Promise<void> {
  const done = exited(child);
  const waitFor = (ms: number) =>
    Promise.race([
      done.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
    ]);
  try {
    child.stdin.end();
    if (await waitFor(graceMs)) return;
    child.kill('SIGTERM');
    if (await waitFor(graceMs)) return;
    child.kill('SIGKILL');
    await done;
  } finally {
    releaseStreams(child);
  }
}
