/**
 * Opening a file that someone else may have made something other than a file. Opening a FIFO for
 * reading waits for a writer (for writing, for a reader), a terminal may wait for a carrier, and
 * `/dev/zero` reads without end; a process that does either on its event loop stops answering
 * everyone. Every open here asks the kernel not to wait (`O_NONBLOCK`: a FIFO or device opens at
 * once, or fails), then checks the open descriptor (`fstat`, not the path, so a file swapped in
 * after a check is still seen) and refuses anything that is not a regular file, naming what it is.
 * Reads are bounded. `O_NONBLOCK` changes nothing for a regular file.
 */
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { TallyError } from './errors.js';

export type RegularFileErrorCode = 'not-regular' | 'too-large';

/** `detail.path` names the file; `detail.kind` what it is instead (a FIFO, a directory…). */
export class RegularFileError extends TallyError<RegularFileErrorCode> {}

/** Added to every open: never wait on the open, never take a terminal. */
const NO_WAIT = (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** Flags as `openSync` spells them, for the few this module is asked for. */
const FLAGS: Record<string, number> = {
  r: constants.O_RDONLY,
  'r+': constants.O_RDWR,
  // Create or open without truncating: the file is checked before anything of it changes.
  w: constants.O_WRONLY | constants.O_CREAT,
  'w+': constants.O_RDWR | constants.O_CREAT,
  a: constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND,
  wx: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
};

export type OpenFlags = keyof typeof FLAGS | number;

/** A FIFO opened for writing with no reader fails at once (ENXIO): said as what it is. */
function openFailed(path: string | Buffer, error: unknown): unknown {
  if ((error as NodeJS.ErrnoException).code !== 'ENXIO') return error;
  try {
    return notRegular(path, statSync(path));
  } catch {
    return error;
  }
}

function flagsOf(flags: OpenFlags): number {
  const value = typeof flags === 'number' ? flags : FLAGS[flags];
  if (value === undefined) throw new TypeError(`unknown open flags '${String(flags)}'`);
  return value | NO_WAIT;
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a directory';
  return 'not a regular file';
}

function notRegular(file: string | Buffer, stat: Stats): RegularFileError {
  const kind = kindOf(stat);
  const path = String(file);
  return new RegularFileError('not-regular', `${path} is ${kind}, not a regular file: it is not read`, {
    path,
    kind,
  });
}

function tooLarge(file: string | Buffer, limit: number): RegularFileError {
  const path = String(file);
  return new RegularFileError('too-large', `${path} is larger than ${limit} bytes: it is not read`, {
    path,
    limit,
  });
}

/**
 * Opens `path` (symbolic links followed, unless `flags` holds O_NOFOLLOW) only when it is a regular
 * file: the descriptor, its size when opened and its status. Errors of the open itself (ENOENT,
 * ELOOP…) are thrown as they come.
 */
export function openRegularSync(
  path: string | Buffer,
  flags: OpenFlags = 'r',
  mode = 0o600,
): { fd: number; size: number; stat: Stats } {
  let fd: number;
  try {
    fd = openSync(path, flagsOf(flags), mode);
  } catch (error) {
    throw openFailed(path, error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw notRegular(path, stat);
    return { fd, size: stat.size, stat };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** `openRegularSync` without blocking the event loop (the open runs in the thread pool, and never waits). */
export async function openRegular(path: string, flags: OpenFlags = 'r', mode = 0o600): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, flagsOf(flags), mode);
  } catch (error) {
    throw openFailed(path, error);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw notRegular(path, stat);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** At most `limit` bytes of an open file from `position`, fewer at its end. */
export function readUpTo(fd: number, limit: number, position = 0): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    const chunk = Buffer.allocUnsafe(Math.min(limit - total, 1024 * 1024));
    const n = readSync(fd, chunk, 0, chunk.length, position + total);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

/** Read-only, and never through a final symbolic link: for files at paths someone else names. */
export const READ_NOFOLLOW: number = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/**
 * At most `limit` bytes of the regular file at `path` (opened without waiting and not through a
 * final link), or null when it is absent, not a regular file, larger than `limit` or unreadable:
 * for files whose absence is an answer, not a fault.
 */
export function readRegularFileOrNull(path: string | Buffer, limit: number): Buffer | null {
  let fd: number;
  let size: number;
  try {
    ({ fd, size } = openRegularSync(path, READ_NOFOLLOW));
  } catch {
    return null;
  }
  try {
    if (size > limit) return null;
    const bytes = readUpTo(fd, limit + 1);
    return bytes.length > limit ? null : bytes;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The whole content of the regular file at `path`, refused when it holds more than `limit` bytes
 * (checked as read, so a file that grows while it is read is refused too).
 */
export function readRegularFileSync(path: string | Buffer, limit: number): Buffer {
  const { fd, size } = openRegularSync(path);
  try {
    if (size > limit) throw tooLarge(path, limit);
    // The size it has now in one buffer; what it grew by since (a file being written) after it.
    const start = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, start, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    const more = readUpTo(fd, limit + 1 - got, got);
    if (got + more.length > limit) throw tooLarge(path, limit);
    return more.length === 0 ? start.subarray(0, got) : Buffer.concat([start.subarray(0, got), more]);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `data` as the whole content of `path`, created with `mode` if missing; a path that is not
 * a regular file (a FIFO put where a file is expected) is refused before anything is written.
 */
export function writeRegularFileSync(path: string, data: string | Uint8Array, mode = 0o644): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const { fd } = openRegularSync(path, 'w', mode);
  try {
    ftruncateSync(fd, 0);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at, at);
  } finally {
    closeSync(fd);
  }
}

/** Appends `data` to the regular file at `path` (created with `mode` if missing). */
export function appendRegularFileSync(path: string, data: string, mode = 0o600): void {
  const bytes = Buffer.from(data, 'utf8');
  const { fd } = openRegularSync(path, 'a', mode);
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  } finally {
    closeSync(fd);
  }
}
