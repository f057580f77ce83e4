/**
 * The content identity of a file of the tree: its SHA-256, and git's blob id of the same bytes so
 * it can be compared with a blob the index named without reading the repository's objects. A file
 * is read in chunks whatever its size, opened without following a link and without waiting (a FIFO
 * or a device is never read as a file); a file that is there but cannot be read is `unreadable`,
 * never absent: only "no such file" means absent. Reading stops at the pass's deadline: a file
 * not read whole by then (a sparse file of a terabyte takes hours) is `unreadable: "timeout"`.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { digest, digestParts } from '../../core/hash.js';
import { nativePath } from './paths.js';

export interface FileIdentity {
  /** "sha256:<hex>" of the content (of the link text for a symbolic link). */
  sha256: string;
  /** git's object id of the same bytes (`blob <n>\0…`), in the repository's hash. */
  blob: string;
}

/** A file that is there but whose content could not be read: the error's code (`EACCES`, …). */
export interface Unread {
  unreadable: string;
}

/** What a path holds: an identity, unreadable content, or nothing (absent, or not a file). */
export type Content = FileIdentity | Unread | null;

/** A path the pass could not read (a file, or a folder it could not list). */
export interface Unreadable {
  raw: string;
  code: string;
  folder?: true;
}

export function isUnread(content: Content | undefined): content is Unread {
  return content !== null && content !== undefined && 'unreadable' in content;
}

/** The code of a failed file-system call, or null when it says there is nothing there. */
export function unreadableCode(error: unknown): string | null {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return null;
  return typeof code === 'string' ? code : 'EIO';
}

/**
 * Whether a path's folders inside the tree are folders, each looked at once per pass. git does not
 * follow a symbolic link on the way to a path: when a folder is replaced by a link, the files git
 * had under it are deleted and the link is a new file. The system follows such a link, so a path
 * read through it would show the files where the link leads (a folder moved aside keeps their
 * inodes and change times, and they would look untouched): such a path is taken as absent.
 */
export class LeadingFolders {
  private readonly known = new Map<string, boolean>();

  constructor(private readonly root: string) {}

  /** false when a folder on the way to `raw` (inside the tree) is a symbolic link. */
  plain(raw: string): boolean {
    const slash = raw.lastIndexOf('/');
    return slash < 0 || this.folder(raw.slice(0, slash));
  }

  private folder(raw: string): boolean {
    const known = this.known.get(raw);
    if (known !== undefined) return known;
    const slash = raw.lastIndexOf('/');
    let plain = slash < 0 || this.folder(raw.slice(0, slash));
    if (plain)
      try {
        plain = lstatSync(nativePath(this.root, raw), { throwIfNoEntry: false })?.isSymbolicLink() !== true;
      } catch {
        // A folder on the way cannot be searched, or is a file: reading the path says so.
      }
    this.known.set(raw, plain);
    return plain;
  }
}

/** A file that kept changing while it was read (three tries). */
export const CHANGING = 'changing';
/** A file not read whole before the pass's deadline. */
export const TIMEOUT = 'timeout';

const CHUNK = 1 << 20;
const chunk = Buffer.allocUnsafe(CHUNK);
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/**
 * The identity of the file at `root/raw`: null when there is none (absent, under a folder that is
 * now a symbolic link, or a folder, a FIFO, a socket or a device: nothing git would store),
 * `{unreadable}` when it is there but could not be read. A symbolic link is identified by its
 * target text, as git stores it. `folders`: null for git's own files, read as git reads them
 * (a hooks folder that is a link is followed). Past `until` (ms since the epoch: the pass's
 * deadline), content is no longer read.
 */
export function identify(
  root: string,
  raw: string,
  format: 'sha1' | 'sha256',
  folders: LeadingFolders | null,
  until?: number,
): Content {
  if (folders !== null && !folders.plain(raw)) return null;
  return identifyAt(nativePath(root, raw), format, until);
}

/** The identity of the file whose path is the bytes `native`, read as `identify` reads one. */
export function identifyAt(native: Buffer, format: 'sha1' | 'sha256', until?: number): Content {
  for (let attempt = 0; attempt < 3; attempt++) {
    const content = readOnce(native, format, until);
    if (content !== CHANGING) return content;
  }
  return { unreadable: CHANGING };
}

function failed(error: unknown): Content {
  const code = unreadableCode(error);
  return code === null ? null : { unreadable: code };
}

/**
 * One read of the path, or CHANGING when it was replaced or its size moved meanwhile. Opened first
 * (one system call fewer than a look before): without following a link (ELOOP: it is one, read as
 * such) and without waiting; read only once the open file is known to be a regular one.
 */
function readOnce(
  native: Buffer,
  format: 'sha1' | 'sha256',
  until: number | undefined,
): Content | typeof CHANGING {
  let fd: number;
  try {
    fd = openSync(native, READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return linkIdentity(native, format);
    if (code === 'ENXIO') return null; // a socket
    return failed(error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return null;
    if (until !== undefined && Date.now() > until) return { unreadable: TIMEOUT };
    const blob = createHash(format).update(`blob ${stat.size}\0`);
    let n = readSync(fd, chunk, 0, CHUNK, null);
    // The common case, a file read in one go: the one-shot digest.
    if (n === stat.size)
      return {
        sha256: digest(chunk.subarray(0, n)),
        blob: blob.update(chunk.subarray(0, n)).digest('hex'),
      };
    const sha = digestParts();
    let total = 0;
    let reads = 1;
    while (n > 0) {
      total += n;
      if (total > stat.size) return CHANGING;
      const part = chunk.subarray(0, n);
      sha.update(part);
      blob.update(part);
      if (total === stat.size) break;
      // A chunk takes about a millisecond: the clock is read once every 64 reads (counted, not
      // inferred from the bytes read, which a short read would put off the beat for good).
      if (until !== undefined && ++reads % 64 === 0 && Date.now() > until) return { unreadable: TIMEOUT };
      n = readSync(fd, chunk, 0, CHUNK, null);
    }
    if (total !== stat.size) return CHANGING;
    return { sha256: sha.digest(), blob: blob.digest('hex') };
  } catch (error) {
    return { unreadable: unreadableCode(error) ?? 'EIO' };
  } finally {
    closeSync(fd);
  }
}

/** A symbolic link, identified by its target text; CHANGING when it is no longer one. */
function linkIdentity(native: Buffer, format: 'sha1' | 'sha256'): Content | typeof CHANGING {
  let target: Buffer;
  try {
    target = readlinkSync(native, { encoding: 'buffer' });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EINVAL' ? CHANGING : failed(error);
  }
  return identityOf(target, format);
}

/** The identity of bytes held whole: their SHA-256 and git's blob id of them. */
export function identityOf(bytes: Buffer, format: 'sha1' | 'sha256'): FileIdentity {
  const blob = createHash(format).update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
  return { sha256: digest(bytes), blob };
}
