/**
 * A cross-process exclusive lock on a file path: `<path>.lock`, created atomically and holding the
 * owner's pid. A lock whose owner no longer runs (crash, kill -9) is taken over; a live owner is
 * waited for up to a deadline, then a clear error names it.
 */
import { linkSync, lstatSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TallyError } from '../../core/errors.js';
import { processAlive } from '../../core/process-alive.js';
import { readRegularFileSync } from '../../core/regular-file.js';

export class LockError extends TallyError<'busy'> {}

/**
 * Takes the lock by hard-linking a file that already holds our pid: the lock file appears with its
 * content in one step, so no other process can find it empty and mistake it for a stale lock.
 */
function tryTake(lockPath: string): boolean {
  const tmp = `${lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, `${process.pid}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    unlinkSync(tmp);
  }
}

/** A lock file holds a pid and a newline. */
const LOCK_FILE_LIMIT = 64;

/** The lock file's text; it is never waited on (a FIFO put in its place is read as no owner). */
function readLockFile(lockPath: string): string {
  return readRegularFileSync(lockPath, LOCK_FILE_LIMIT).toString('utf8');
}

function readOwner(lockPath: string): number | null {
  try {
    return Number.parseInt(readLockFile(lockPath), 10);
  } catch {
    return null; // released meanwhile, or not a lock file: never taken for a dead owner's
  }
}

/**
 * Removes a lock whose owner has died. Breakers are serialised by `<lock>.break` (created
 * exclusively); under it the owner is read again, so a lock that was re-taken by a live process in
 * the meantime is never removed. Nobody can re-take a lock that still exists, so between that
 * second read and the unlink it cannot change hands.
 */
function breakIfStale(lockPath: string): void {
  const owner = readOwner(lockPath);
  if (owner === null || processAlive(owner)) return;
  const breaker = `${lockPath}.break`;
  try {
    writeFileSync(breaker, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
  } catch {
    // Another process is breaking it; a breaker that died long ago leaves its file behind.
    try {
      if (Date.now() - statSync(breaker).mtimeMs > 10_000) unlinkSync(breaker);
    } catch {}
    return;
  }
  try {
    const again = readOwner(lockPath);
    if (again !== null && !processAlive(again)) unlinkSync(lockPath);
  } finally {
    unlinkSync(breaker);
  }
}

export interface FileLock {
  /**
   * Removes the lock file, only if it is still the one this lock created (the same file, not one
   * another process took since). `path`: where the locked file is now, when its folder was moved
   * while it was held (the lock file moved with it); else where it was locked.
   */
  release(path?: string): void;
}

/**
 * The identity of a file: the same (dev, ino) is the same file wherever it is now; its birth time
 * tells it from a file made since under a freed inode number (ext4 hands one out again at once).
 */
function identityOf(path: string): string | undefined {
  try {
    const stat = lstatSync(path, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

export async function acquireLock(path: string, timeoutMs = 15_000): Promise<FileLock> {
  const lockPath = `${path}.lock`;
  const deadline = Date.now() + timeoutMs;
  let wait = 1;
  for (;;) {
    if (tryTake(lockPath)) {
      let held = true;
      const taken = identityOf(lockPath);
      return {
        release(now?: string) {
          if (!held) return;
          held = false;
          // A lock whose file could not be read as it was taken is released where it was taken.
          for (const candidate of now === undefined ? [lockPath] : [`${now}.lock`, lockPath])
            if (taken === undefined ? candidate === lockPath : identityOf(candidate) === taken) {
              try {
                unlinkSync(candidate);
              } catch {
                // gone meanwhile: nothing to release
              }
              return;
            }
        },
      };
    }
    breakIfStale(lockPath);
    if (Date.now() >= deadline) {
      let owner = '?';
      try {
        owner = readLockFile(lockPath).trim();
      } catch (error) {
        owner = `? (${(error as Error).message})`;
      }
      throw new LockError('busy', `${path} is locked by process ${owner}; waited ${timeoutMs} ms`, {
        path,
        owner,
      });
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 50);
  }
}
