/**
 * Bounded reads of the files a harness keeps beside its hook payloads (transcripts, a subagent's
 * `.meta.json`). Their paths come from payloads the agent can send, and the files live where the
 * agent can write: a path is opened only if it is absolute, not through a final symbolic link, and
 * without waiting (a FIFO would otherwise hold the recorder until something writes to it); only a
 * regular file is read, and never more than the caller's limit.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { isAbsolute } from 'node:path';

export interface FileSlice {
  bytes: Buffer;
  /** Where the slice starts in the file. */
  start: number;
  /** The file's size when it was read. */
  size: number;
  /** Device and inode: a file replaced under the same name is another file. */
  identity: string;
}

const FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * At most `limit` bytes of the regular file at `path`, from `start` — or, when more than `limit`
 * bytes follow it, the last `limit` bytes. Undefined when the file cannot be read as one.
 */
export function readFileSlice(path: string, start: number, limit: number): FileSlice | undefined {
  if (!isAbsolute(path)) return undefined;
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const size = stat.size;
    const from = start > size ? size : Math.max(start, size - limit);
    const bytes = Buffer.alloc(size - from);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, from + read);
      if (n === 0) break;
      read += n;
    }
    return { bytes: bytes.subarray(0, read), start: from, size, identity: `${stat.dev}:${stat.ino}` };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
