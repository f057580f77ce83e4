/**
 * `tally wrap -- <cmd…>`: a command run with inherited stdio, captured as one shell tool call
 * (`tool.before`, judged before it runs; `tool.after` with its exit code and duration) and the file
 * changes it made, found by comparing content-hash snapshots of the tree taken before and after.
 * The channel translates; the caller records through the boundary.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { eventId } from '../../boundary/prepare.js';
import type { CanonicalEvent } from '../../core/event.js';

/** The event source URI of everything `wrap` records. */
export const WRAP_URI = 'urn:tally:wrap';
/** The record source label. */
export const WRAP_SOURCE = 'wrap';
/** The tool name the call is recorded under; its kind makes the certificate judge it as a shell. */
export const WRAP_TOOL = 'wrap';

const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;
/** A word that sets something: `NAME=value`, `--flag=value`, `-f=value`. */
const SETTING = /^((?:[A-Za-z_][A-Za-z0-9_]*|--?[A-Za-z0-9][A-Za-z0-9_.-]*)=)([\s\S]*)$/;
/** What stays literal inside double quotes in every POSIX shell. */
const DOUBLE_SAFE = /^[^"\\$`]*$/;

/** One word as the shell reads it back: single quotes, or double ones around a single quote. */
function quoted(word: string): string {
  if (word !== '' && PLAIN.test(word)) return word;
  if (!word.includes("'")) return `'${word}'`;
  if (DOUBLE_SAFE.test(word)) return `"${word}"`;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The argv as one POSIX shell command line that reads back as the same words. A setting's value is
 * quoted apart from its name (`--password='a b'`, not `'--password=a b'`) and a word holding a single
 * quote is put in double quotes where that reads the same: so the redaction of recorded inputs,
 * which reads command lines as a shell does, sees the value a secret-named setting gives.
 */
export function commandLine(argv: readonly string[]): string {
  return argv
    .map((word) => {
      const setting = PLAIN.test(word) ? null : SETTING.exec(word);
      return setting ? `${setting[1]}${quoted(setting[2]!)}` : quoted(word);
    })
    .join(' ');
}

export interface Ran {
  /**
   * The command's exit code; 128 + n when signal n ended it; 127 when there is no such command,
   * 126 when it could not be started (not executable, a folder).
   */
  code: number;
  signal?: string;
  durationMs: number;
  /** Why it could not start (`ENOENT`, …). */
  startError?: string;
  /**
   * Processes the command started still held its watch descriptor (fd 3) when wrap stopped waiting
   * for them: what they write later is not in this comparison.
   */
  stillRunning?: boolean;
}

/** The signals that would end wrap before the command: sent on to the command instead. */
export const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;
/** The signals a terminal's keys send to its whole foreground process group. */
const FROM_KEYS = new Set<string>(['SIGINT', 'SIGQUIT']);

/**
 * Whether this process is in its terminal's foreground process group (Linux: `/proc/self/stat`'s
 * `pgrp` and `tpgid`): then the command, in the same group, got a key's signal from the terminal
 * itself. Elsewhere, or when it cannot be told: false.
 */
export function inForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [pgrp, tty, tpgid] = [fields[2], fields[4], fields[5]];
    return tty !== '0' && pgrp === tpgid;
  } catch {
    return false;
  }
}

/**
 * Runs `argv` with inherited stdio. SIGINT, SIGTERM, SIGHUP and SIGQUIT do not end wrap (it records
 * the command's end): they are sent on to the command, but for Ctrl-C and Ctrl-\ while wrap is in
 * the terminal's foreground, which the terminal sent to the command already (sent twice, a second
 * Ctrl-C is "quit now" to many programs).
 *
 * The command also gets one end of a pipe as fd 3, which every process it starts inherits unless it
 * closes it: once the command has exited, wrap waits up to `lingerMs` for the last of them to let
 * go (a child left running in the background writes after its parent exits), or for a signal.
 */
export function runInherited(
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; lingerMs: number },
): Promise<Ran> {
  const started = performance.now();
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(argv[0]!, argv.slice(1), {
        stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
        cwd: options.cwd,
        env: options.env,
      });
    } catch (error) {
      // An argument no process can be given (a NUL byte in it): it cannot be run.
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return resolve({ code: 126, startError: code, durationMs: 0 });
    }
    const watch = child.stdio[3] as Readable | null;
    let exited = false;
    let stopWaiting = () => {};
    const forward = (signal: NodeJS.Signals) => {
      if (exited) stopWaiting();
      else if (!(FROM_KEYS.has(signal) && inForeground())) child.kill(signal);
    };
    for (const signal of FORWARDED) process.on(signal, forward);
    const released = new Promise<void>((let_go) => {
      if (watch === null) return let_go();
      watch.on('error', () => let_go());
      watch.on('close', () => let_go());
      watch.resume();
    });
    let held = watch !== null;
    released.then(() => {
      held = false;
    });
    const done = async (ran: Omit<Ran, 'durationMs'>) => {
      exited = true;
      const durationMs = Math.round(performance.now() - started);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        released,
        new Promise<void>((stop) => {
          stopWaiting = stop;
          timer = setTimeout(stop, options.lingerMs);
        }),
      ]);
      clearTimeout(timer);
      for (const signal of FORWARDED) process.off(signal, forward);
      const stillRunning = held;
      watch?.destroy();
      resolve({ ...ran, durationMs, ...(stillRunning ? { stillRunning } : {}) });
    };
    // As a shell says: 127 when there is no such command, 126 when it is there but cannot be run.
    child.once('error', (error: NodeJS.ErrnoException) =>
      done({ code: error.code === 'ENOENT' ? 127 : 126, startError: error.code ?? error.message }),
    );
    child.once('exit', (code, signal) => {
      if (signal !== null) {
        const n = (constants.signals as Record<string, number>)[signal] ?? 1;
        done({ code: 128 + n, signal });
      } else done({ code: code ?? 1 });
    });
  });
}

export function wrapCallId(): string {
  return `wrap_${randomBytes(8).toString('hex')}`;
}

function tool(command: string): Record<string, unknown> {
  return { name: WRAP_TOOL, kind: 'shell', origin: 'native', input: { command } };
}

/** The call before it runs: judged (the certificate may forbid the command). */
export function beforeEvent(call: string, command: string, cwd: string, session: string): CanonicalEvent {
  return {
    id: eventId(),
    type: 'tool.before',
    time: new Date().toISOString(),
    source: WRAP_URI,
    session: { id: session, cwd },
    call: { id: call },
    path: 'native',
    tool: tool(command),
  };
}

/** The call once it ran: exit code and duration (`dev.tally.process`), outcome ok only for 0. */
export function afterEvent(
  call: string,
  command: string,
  cwd: string,
  session: string,
  ran: Ran,
): CanonicalEvent {
  const process: Record<string, unknown> = { exitCode: ran.code, durationMs: ran.durationMs };
  if (ran.signal !== undefined) process.signal = ran.signal;
  const event: CanonicalEvent = {
    id: eventId(),
    type: 'tool.after',
    time: new Date().toISOString(),
    source: WRAP_URI,
    session: { id: session, cwd },
    call: { id: call },
    path: 'native',
    tool: tool(command),
    outcome: ran.code === 0 ? 'ok' : 'error',
    execution: { status: 'executed' },
    items: [],
    durationMs: ran.durationMs,
    extensions: { 'dev.tally.process': process },
  };
  if (ran.code !== 0)
    event.error = {
      class: 'operation',
      message: ran.startError ?? (ran.signal ? `ended by ${ran.signal}` : `exit code ${ran.code}`),
    };
  return event;
}
