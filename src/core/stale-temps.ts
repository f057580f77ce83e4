/**
 * Temporary files a writer left beside the file it was making: `<name>.<pid>.tmp`, written and then
 * renamed into place. A writer killed before the rename (SIGKILL, a crash, the machine going down)
 * leaves its temporary file for good; the next writer of the same file removes those whose process
 * no longer runs. One of a process that still runs (another writer at work) is left alone, and so
 * is whatever is not a regular file under such a name (a folder, a link: no writer leaves one).
 * Removing is tidying, never a failure of the write that asked for it.
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { processAlive } from './process-alive.js';

/** Removes `<path>.<pid>.tmp` beside `path` for every pid that no longer runs; the names removed. */
export async function removeStaleTemps(path: string): Promise<string[]> {
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = name.slice(prefix.length, -'.tmp'.length);
    if (!/^[1-9][0-9]{0,9}$/.test(pid) || processAlive(Number(pid))) continue;
    const leftover = join(dirname(path), name);
    try {
      if (!(await lstat(leftover)).isFile()) continue;
      await rm(leftover, { force: true });
    } catch {
      continue;
    }
    removed.push(name);
  }
  return removed;
}
