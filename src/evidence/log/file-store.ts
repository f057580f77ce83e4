/**
 * The file store of a session log: the only code that appends to a log file. It holds the log's
 * lock for as long as it is open and acknowledges an append only after the bytes are on disk
 * (the file is open with O_DSYNC: a write returns once durable, as write + fdatasync would).
 * Appends that arrive while a write runs are written and synced together (group commit), so
 * throughput does not pay one sync per record.
 *
 * The file is extended ahead of its appends (sparse, by ftruncate) and each commit overwrites the
 * reserved zeros in place: a durable write that does not change the file's size skips a journal
 * commit of the new size (docs/performance.md). Readers take zeros that run to the end of the file
 * as reserved space, not content (./reader.ts); close gives the file back its content's length.
 *
 * On open, reserved space a crash left behind is dropped, and a torn last line (a crash mid-write)
 * is moved to a quarantine file beside the log and reported; the complete lines before it are kept.
 */
import {
  closeSync,
  constants,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TallyError } from '../../core/errors.js';
import { currentPathOf } from '../../core/fd-path.js';
import { openRegular, openRegularSync } from '../../core/regular-file.js';
import { MAX_LINE_BYTES, RecordError } from '../record/codec.js';
import { type HeadFile, headOfLine, type StoredHead } from './head-file.js';
import { acquireLock, type FileLock } from './lock.js';
import { readLogLines } from './reader.js';
import type { RecordStore } from './store.js';

export interface TornTail {
  offset: number;
  bytes: number;
  quarantinePath: string;
}

export interface OpenStoreOptions {
  lockTimeoutMs?: number;
  /**
   * The chain head kept outside the log (./head-file.ts): checked against the log on open, and
   * rewritten after every group commit.
   */
  head?: HeadFile;
}

/**
 * `closed`: appended after close; `write-failed`: the file is in an unknown state until reopened;
 * `truncated-log`: the log ends before its head; `head-missing`: a non-empty log without its head
 * file; `head-mismatch`: the log's last record is not the one its head names.
 */
export class StoreError extends TallyError<
  'closed' | 'write-failed' | 'truncated-log' | 'head-missing' | 'head-mismatch'
> {}

/** The log's last line agrees with the head kept outside it, or the open is refused. */
function checkHead(path: string, head: HeadFile, last: Buffer | null): void {
  const stored = head.read();
  let found: StoredHead | null = null;
  try {
    found = last === null ? null : headOfLine(last);
  } catch {
    return; // not a record at all: resuming the chain reports it (tally session repair sets it aside)
  }
  if (stored === null) {
    if (found === null) return;
    throw new StoreError(
      'head-missing',
      `the chain head of ${path} (${head.path}) is missing: the log cannot be shown to be whole, so it is not continued; nothing was recorded (tally session repair re-establishes the head and records that it did)`,
      { path, head: head.path, last: found.seq },
    );
  }
  const lastSeq = found?.seq ?? -1;
  if (lastSeq < stored.seq) {
    const from = lastSeq + 1;
    throw new StoreError(
      'truncated-log',
      `${path} ends at record ${lastSeq} but its chain head (${head.path}) is record ${stored.seq}: records ${from}–${stored.seq} were removed from the log; nothing was recorded`,
      { path, head: head.path, missing: { from, to: stored.seq }, head_digest: stored.digest },
    );
  }
  if (lastSeq === stored.seq && found?.digest !== stored.digest)
    throw new StoreError(
      'head-mismatch',
      `the last record of ${path} (seq ${lastSeq}, ${found?.digest}) is not the one its chain head names (${stored.digest}); nothing was recorded`,
      { path, head: head.path, seq: lastSeq, found: found?.digest, expected: stored.digest },
    );
}

interface Pending {
  lines: readonly Buffer[];
  /** The head of the last line, when the caller knows it (else it is read back from the line). */
  head: StoredHead | undefined;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Finds the last complete line and where a torn remainder (bytes after the last "\n") starts,
 * reading backwards in fixed chunks and keeping only newline positions, so the cost is linear in
 * the tail scanned and memory is one chunk plus the last line. A last line longer than any record
 * may be (MAX_LINE_BYTES) is refused rather than read.
 */
function readTail(fd: number, size: number, path: string): { lastLine: Buffer | null; tornFrom: number } {
  const CHUNK = 64 * 1024;
  const piece = Buffer.alloc(CHUNK);
  const newlines: number[] = []; // absolute positions, the last one first; two are enough
  let end = size;
  while (end > 0 && newlines.length < 2) {
    const from = Math.max(0, end - CHUNK);
    readSync(fd, piece, 0, end - from, from);
    for (let i = end - from - 1; i >= 0 && newlines.length < 2; ) {
      const found = piece.lastIndexOf(0x0a, i);
      if (found < 0) break;
      newlines.push(from + found);
      i = found - 1;
    }
    // Past the limit with only the final newline seen: the last line is too long to be a record.
    end = from;
    if (newlines.length === 1 && (newlines[0] as number) - from > MAX_LINE_BYTES) break;
  }
  const last = newlines[0];
  if (last === undefined) return { lastLine: null, tornFrom: 0 };
  // The line starts after the newline before it, or at 0 when the scan reached the start of the
  // file; when the scan stopped early (the line already too long), where it starts is not known.
  const start = newlines.length > 1 ? (newlines[1] as number) + 1 : end === 0 ? 0 : undefined;
  if (start === undefined || last - start > MAX_LINE_BYTES) {
    throw new RecordError(
      'parse',
      `the last line of ${path} (ending at byte ${last}) is longer than ${MAX_LINE_BYTES} bytes, the longest a record may be: this is not a log Tally can continue`,
      { ...(start === undefined ? {} : { offset: start }), end: last, limit: MAX_LINE_BYTES },
    );
  }
  const lastLine = Buffer.alloc(last - start);
  readSync(fd, lastLine, 0, lastLine.length, start);
  return { lastLine, tornFrom: last + 1 };
}

/**
 * The length of the file's content: its size less the zero bytes that run to its end (space a
 * store reserved and never wrote), read backwards in fixed chunks.
 */
function contentLength(fd: number, size: number): number {
  const CHUNK = 64 * 1024;
  const piece = Buffer.alloc(CHUNK);
  let end = size;
  while (end > 0) {
    const from = Math.max(0, end - CHUNK);
    readSync(fd, piece, 0, end - from, from);
    let i = end - from - 1;
    while (i >= 0 && piece[i] === 0) i--;
    if (i >= 0) return from + i + 1;
    end = from;
  }
  return 0;
}

/** The first reservation ahead of the appends, and the largest: it doubles up to this. */
const RESERVE_MIN = 64 * 1024;
const RESERVE_MAX = 1024 * 1024;

/**
 * Copies bytes [from, to) of `source` to `<log>.torn-<offset>` (or `-2`, `-3`… if a crash left one
 * there before) in bounded chunks, and syncs it and its directory.
 */
function writeQuarantine(path: string, source: number, from: number, to: number): string {
  for (let n = 1; ; n++) {
    const candidate = `${path}.torn-${from}${n === 1 ? '' : `-${n}`}`;
    let fd: number;
    try {
      fd = openSync(candidate, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    try {
      const chunk = Buffer.alloc(Math.min(1024 * 1024, Math.max(1, to - from)));
      for (let at = from; at < to; ) {
        const read = readSync(source, chunk, 0, Math.min(chunk.length, to - at), at);
        if (read === 0) break;
        // A short write (a disk filling up) goes on from where it stopped, and then fails.
        for (let done = 0; done < read; ) done += writeSync(fd, chunk, done, read - done);
        at += read;
      }
      fsyncSync(fd);
    } catch (error) {
      // A copy that could not be made whole (a full disk) is not left behind: the torn bytes are
      // still in the log, and the next open makes its copy again.
      closeSync(fd);
      unlinkSync(candidate);
      throw error;
    }
    closeSync(fd);
    const dirFd = openSync(dirname(path), 'r');
    fsyncSync(dirFd);
    closeSync(dirFd);
    return candidate;
  }
}

/** File stores of this process with a group commit under way (see the write in scheduleFlush). */
let committing = 0;

export class FileRecordStore implements RecordStore {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  /** A failed write leaves the file in an unknown state: no further append is accepted. */
  private failure: Error | null = null;
  /** Where the next append goes: the content's length. */
  private end: number;
  /** The file's size: the content and the space reserved after it. */
  private capacity: number;
  private reserve = RESERVE_MIN;
  /** Commits that found no reserved space (the first is written as a plain append). */
  private commits = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly lock: FileLock,
    private readonly last: Buffer | null,
    /** Set when a torn tail was found and quarantined on open. */
    readonly recovered: TornTail | null,
    private readonly head: HeadFile | undefined,
    size: number,
  ) {
    this.end = size;
    this.capacity = size;
  }

  static async open(path: string, options: OpenStoreOptions = {}): Promise<FileRecordStore> {
    const lock = await acquireLock(path, options.lockTimeoutMs);
    try {
      const recovered = FileRecordStore.recoverTail(path);
      // Every open of the log takes only a regular file, and never waits (docs/recorder.md): a FIFO
      // put at its path fails this session's open, not the process.
      const fd = openRegularSync(path).fd;
      let last: Buffer | null;
      let size: number;
      try {
        size = fstatSync(fd).size;
        last = readTail(fd, size, path).lastLine;
      } finally {
        closeSync(fd);
      }
      if (options.head) checkHead(path, options.head, last);
      // O_DSYNC: each write returns once it is durable, as a write followed by fdatasync would,
      // in one system call (one trip through the thread pool instead of two). Positional writes,
      // not O_APPEND: appends overwrite the space reserved after the content.
      const handle = await openRegular(path, constants.O_WRONLY | constants.O_DSYNC);
      return new FileRecordStore(path, handle, lock, last, recovered, options.head, size);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** Quarantines bytes after the last newline; they are an append that never completed. */
  private static recoverTail(path: string): TornTail | null {
    let fd: number;
    try {
      fd = openRegularSync(path, 'r+').fd;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        writeFileSync(path, '', { mode: 0o600, flag: 'wx' });
        const dirFd = openSync(dirname(path), 'r');
        fsyncSync(dirFd);
        closeSync(dirFd);
        return null;
      }
      throw error;
    }
    try {
      const stat = fstatSync(fd).size;
      // Space reserved by a store that did not close (a crash) is not content: given back first.
      const size = contentLength(fd, stat);
      if (size < stat) {
        ftruncateSync(fd, size);
        fsyncSync(fd);
      }
      const { tornFrom } = readTail(fd, size, path);
      if (tornFrom >= size) return null;
      // The torn bytes are durable in their own file before they leave the log.
      const quarantinePath = writeQuarantine(path, fd, tornFrom, size);
      ftruncateSync(fd, tornFrom);
      fsyncSync(fd);
      return { offset: tornFrom, bytes: size - tornFrom, quarantinePath };
    } finally {
      closeSync(fd);
    }
  }

  /** The last complete line found when the store was opened. */
  lastLine(): Buffer | null {
    return this.last;
  }

  async *lines(fromLine = 0): AsyncIterable<Buffer> {
    let n = 0;
    for await (const { line, torn } of readLogLines(this.path)) {
      if (torn) return;
      if (n++ >= fromLine) yield line;
    }
  }

  append(lines: readonly Buffer[], head?: StoredHead): Promise<void> {
    if (this.closed) return Promise.reject(new StoreError('closed', `log ${this.path} is closed`));
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ lines, head, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    committing++;
    this.flushing = (async () => {
      await null; // let appends made in the same tick join the first batch
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          const lines = batch.length === 1 ? batch[0]!.lines : batch.flatMap((p) => p.lines);
          const bytes = lines.length === 1 ? lines[0]! : Buffer.concat(lines);
          // Reserved from the second commit on: a store that appends once (a CLI command) and
          // closes pays no extension and no truncation.
          if (this.end + bytes.length > this.capacity && this.commits++ > 0) this.extend(bytes.length);
          const position = this.end;
          // Durable on return (O_DSYNC); a short write goes on from where it stopped. A commit alone
          // in this process writes on the event loop: nothing else is waiting to run meanwhile that
          // a thread would let through, and the thread pool's round trip (a pool thread woken, then
          // the loop) costs as much again as the write. With other stores committing, the write
          // goes to the pool so the writes overlap one another and the loop's work.
          for (let at = 0; at < bytes.length; )
            at +=
              committing === 1
                ? writeSync(this.handle.fd, bytes, at, bytes.length - at, position + at)
                : (await this.handle.write(bytes, at, bytes.length - at, position + at)).bytesWritten;
          this.end += bytes.length;
          this.capacity = Math.max(this.capacity, this.end);
          // Once per group commit, after the log is durable and before anything is acknowledged: the
          // head never names a record the log lacks, and no answer leaves before the head names its
          // record (an agent that kills the recorder the moment it reads an answer, then cuts that
          // record off the log, meets the head). Only the write that creates the head file is synced;
          // later ones go into the page cache in place (a head lost in a crash only lags the log).
          const lastLine = lines[lines.length - 1];
          const head =
            this.head && lastLine !== undefined
              ? (batch[batch.length - 1]!.head ?? headOfLine(lastLine.subarray(0, lastLine.length - 1)))
              : undefined;
          if (head !== undefined) await this.head!.write(head);
          for (const p of batch) p.resolve();
          // The next commit starts a turn of the event loop later: the requests its answers let
          // in join it, and this store still counts as committing meanwhile, so another store's
          // commit goes to the pool beside it rather than blocking the loop (under eight sessions'
          // load, starting at once made commits of one record, written on the loop: 2.5× fewer
          // events a second).
          await new Promise((resolve) => setImmediate(resolve));
        } catch (error) {
          this.failure = new StoreError(
            'write-failed',
            `write to ${this.path} failed; reopen the log to recover: ${(error as Error).message}`,
            undefined,
            { cause: error },
          );
          for (const p of [...batch, ...this.queue]) p.reject(this.failure);
          this.queue = [];
        }
      }
      this.flushing = null;
      committing--;
    })();
  }

  /**
   * Reserves space for at least `bytes` more after the content: a sparse extension (no block is
   * written), synced once, so that the appends into it are durable without a change of size.
   */
  private extend(bytes: number): void {
    this.capacity = this.end + bytes + this.reserve;
    this.reserve = Math.min(RESERVE_MAX, this.reserve * 2);
    ftruncateSync(this.handle.fd, this.capacity);
    fdatasyncSync(this.handle.fd);
  }

  /** Where the log is now: its path, or the one it moved to with its folder while it was open. */
  whereNow(): string {
    return currentPathOf(this.handle.fd) ?? this.path;
  }

  /** Waits for every pending append, gives back the reserved space, releases the file and the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    const now = this.whereNow();
    try {
      // A log that failed to write is left as it is: reopening it recovers it.
      if (this.failure === null && this.capacity > this.end) {
        ftruncateSync(this.handle.fd, this.end);
        fdatasyncSync(this.handle.fd);
      }
    } finally {
      await this.handle.close();
      this.head?.close();
      this.lock.release(now);
    }
  }
}
