/**
 * The `tally wrap` processes that record into a session a wrap opened for itself
 * (`sessions/<id>/wrap/<pid>`, one empty file each, made new). A wrap that starts while another
 * wrap's own session is open joins it rather than writing into a session sealed under it; the
 * session is sealed by the last of them to finish: each removes its own file first and then looks
 * for another that still runs, so of two finishing together at least the later one sees none.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../core/process-alive.js';
import { sessionDir } from '../session/store.js';

function folder(state: string, session: string): string {
  return join(sessionDir(state, session), 'wrap');
}

/** Counts this process among the wraps recording into the session. */
export function joinWrapSession(state: string, session: string): void {
  const dir = folder(state, session);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Made new: whatever stood at the name (a FIFO would hold the open) goes first.
  const path = join(dir, String(process.pid));
  rmSync(path, { force: true, recursive: true });
  writeFileSync(path, '', { flag: 'wx', mode: 0o600 });
}

/** The other wraps recording into the session that still run. */
export function otherWraps(state: string, session: string): number[] {
  let names: string[];
  try {
    names = readdirSync(folder(state, session));
  } catch {
    return [];
  }
  return names
    .filter((name) => /^[1-9]\d{0,9}$/.test(name))
    .map(Number)
    .filter((pid) => pid !== process.pid && processAlive(pid));
}

/** Stops counting this process; the wraps that still run after it (none: this one seals). */
export function leaveWrapSession(state: string, session: string): number[] {
  rmSync(join(folder(state, session), String(process.pid)), { force: true });
  return otherWraps(state, session);
}
