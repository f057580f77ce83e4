/**
 * A cross-process exclusive lock on a file path: `<path>.lock` created with O_EXCL, holding the
 * owner's pid. A lock whose owner no longer runs (crash, kill -9) is taken over; a live owner is
 * waited for up to a deadline, then a clear error names it.
 */
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TallyError } from '../core/errors.js';

export class LockError extends TallyError<'busy'> {}

function ownerAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryTake(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx', 0o600);
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  }
}

function breakIfStale(lockPath: string): void {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
  } catch {
    return; // released meanwhile
  }
  if (ownerAlive(pid)) return;
  // Rename first: of several processes finding the same stale lock, only one rename succeeds.
  const aside = `${lockPath}.stale.${process.pid}`;
  try {
    renameSync(lockPath, aside);
    unlinkSync(aside);
  } catch {
    // another process broke it first
  }
}

export interface FileLock {
  release(): void;
}

export async function acquireLock(path: string, timeoutMs = 15_000): Promise<FileLock> {
  const lockPath = `${path}.lock`;
  const deadline = Date.now() + timeoutMs;
  let wait = 1;
  for (;;) {
    if (tryTake(lockPath)) {
      let held = true;
      return {
        release() {
          if (!held) return;
          held = false;
          try {
            unlinkSync(lockPath);
          } catch {
            // already gone: nothing to release
          }
        },
      };
    }
    breakIfStale(lockPath);
    if (Date.now() >= deadline) {
      let owner = '?';
      try {
        owner = readFileSync(lockPath, 'utf8').trim();
      } catch {}
      throw new LockError('busy', `${path} is locked by process ${owner}; waited ${timeoutMs} ms`, {
        path,
        owner,
      });
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 50);
  }
}
