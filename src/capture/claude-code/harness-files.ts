/**
 * Bounded reads of the files a harness keeps beside its hook payloads (transcripts, a subagent's
 * `.meta.json`). Their paths come from payloads the agent can send, and the files live where the
 * agent can write: a path is opened only if it is absolute, not through a final symbolic link, and
 * without waiting (a FIFO would otherwise hold the recorder until something writes to it); only a
 * regular file is read, and never more than the caller's limit.
 */
import { closeSync, type Stats } from 'node:fs';
import { isAbsolute } from 'node:path';
import { openRegularSync, READ_NOFOLLOW, readUpTo } from '../../core/regular-file.js';

export interface FileSlice {
  bytes: Buffer;
  /** Where the slice starts in the file. */
  start: number;
  /** The file's size when it was read. */
  size: number;
  /** Device and inode: a file replaced under the same name is another file. */
  identity: string;
}

/**
 * At most `limit` bytes of the regular file at `path`, from `start` — or, when more than `limit`
 * bytes follow it, the last `limit` bytes. Undefined when the file cannot be read as one.
 */
export function readFileSlice(path: string, start: number, limit: number): FileSlice | undefined {
  if (!isAbsolute(path)) return undefined;
  let opened: { fd: number; size: number; stat: Stats };
  try {
    opened = openRegularSync(path, READ_NOFOLLOW);
  } catch {
    return undefined;
  }
  const { fd, size, stat } = opened;
  try {
    const from = start > size ? size : Math.max(start, size - limit);
    return { bytes: readUpTo(fd, size - from, from), start: from, size, identity: identityOf(stat) };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Device and inode, as a slice names its file. */
export function identityOf(stat: { dev: number; ino: number }): string {
  return `${stat.dev}:${stat.ino}`;
}
