/**
 * The session log writer: the only code that appends to a log. It holds the log's lock for as long
 * as it is open, signs each record as it is appended, and acknowledges an append only after the
 * bytes are on disk (fdatasync). Appends that arrive while a sync runs are written and synced
 * together (group commit), so throughput does not pay one fsync per record.
 *
 * On open, a torn last line (a crash mid-write) is moved to a quarantine file beside the log and
 * reported; the complete records before it are kept and the chain continues from the last one.
 */
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { verifyEnvelope } from '../../core/dsse.js';
import { sha256 } from '../../core/hash.js';
import { toPublicKey } from '../../core/keys.js';
import {
  decodeRecordPayload,
  digestRef,
  encodeRecord,
  MAX_LINE_BYTES,
  parseEnvelopeLine,
  RecordError,
  type Signer,
} from '../record/codec.js';
import type { AgentAttribution, CanonicalEvent, EventRecord, PolicyDecision } from '../record/record.js';
import { RECORD_VERSION } from '../record/record.js';
import { acquireLock, type FileLock } from './lock.js';

export interface AppendInput {
  source: string;
  event: CanonicalEvent;
  agent?: AgentAttribution;
  decision?: PolicyDecision;
}

export interface Appended {
  seq: number;
  digest: string;
  record: EventRecord;
}

export interface TornTail {
  offset: number;
  bytes: number;
  quarantinePath: string;
}

export interface OpenLogOptions {
  session: string;
  signer: Signer;
  /** Clock for record times; tests inject one. */
  now?: () => Date;
  lockTimeoutMs?: number;
  /** The longest line an append may write (default MAX_LINE_BYTES, the readers' limit). */
  maxLineBytes?: number;
}

interface Pending {
  line: Buffer;
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
        writeSync(fd, chunk, 0, read);
        at += read;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const dirFd = openSync(dirname(path), 'r');
    fsyncSync(dirFd);
    closeSync(dirFd);
    return candidate;
  }
}

export class LogWriter {
  private nextSeq = 0;
  private prev: string | null = null;
  private last: EventRecord | null = null;
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  /** A failed write leaves the file in an unknown state: no further append is accepted. */
  private failure: Error | null = null;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly lock: FileLock,
    private readonly options: OpenLogOptions,
    /** Set when a torn tail was found and quarantined on open. */
    readonly recovered: TornTail | null,
  ) {}

  static async open(path: string, options: OpenLogOptions): Promise<LogWriter> {
    const lock = await acquireLock(path, options.lockTimeoutMs);
    try {
      const recovered = LogWriter.recoverTail(path);
      const handle = await open(path, 'a', 0o600);
      const writer = new LogWriter(path, handle, lock, options, recovered);
      try {
        writer.resumeChain();
      } catch (error) {
        await handle.close();
        throw error;
      }
      return writer;
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** Quarantines bytes after the last newline; they are an append that never completed. */
  private static recoverTail(path: string): TornTail | null {
    let fd: number;
    try {
      fd = openSync(path, 'r+');
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
      const size = fstatSync(fd).size;
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

  /** Continues the chain from the last record on disk, checking it is ours and intact. */
  private resumeChain(): void {
    const fd = openSync(this.path, 'r');
    try {
      const { lastLine } = readTail(fd, fstatSync(fd).size, this.path);
      if (!lastLine) return;
      const envelope = parseEnvelopeLine(lastLine);
      const { payload } = verifyEnvelope(envelope, [toPublicKey(this.options.signer.privateKey)], {
        strict: true,
      });
      const record = decodeRecordPayload(payload);
      if (record.session !== this.options.session) {
        throw new RecordError(
          'session',
          `log ${this.path} belongs to session ${record.session}, not ${this.options.session}`,
        );
      }
      this.nextSeq = record.seq + 1;
      this.prev = digestRef(sha256(payload));
      this.last = record;
    } catch (error) {
      if (error instanceof RecordError) throw error;
      throw new RecordError(
        'signature',
        `cannot continue ${this.path}: its last record does not verify with this key (${(error as Error).message})`,
      );
    } finally {
      closeSync(fd);
    }
  }

  get size(): number {
    return this.nextSeq;
  }

  /** The last record appended (or found on disk at open), if any. */
  get lastRecord(): EventRecord | null {
    return this.last;
  }

  /** Signs and appends one record; resolves once it is durable. */
  append(input: AppendInput): Promise<Appended> {
    if (this.closed) return Promise.reject(new Error(`log ${this.path} is closed`));
    if (this.failure) return Promise.reject(this.failure);
    const record: EventRecord = {
      v: RECORD_VERSION,
      seq: this.nextSeq,
      time: (this.options.now?.() ?? new Date()).toISOString(),
      session: this.options.session,
      source: input.source,
      ...(input.agent ? { agent: input.agent } : {}),
      event: input.event,
      ...(input.decision ? { decision: input.decision } : {}),
      prev: this.prev,
    };
    const { line, digest } = encodeRecord(record, this.options.signer);
    // Never above what readers accept: a record written must be readable.
    const limit = Math.min(this.options.maxLineBytes ?? MAX_LINE_BYTES, MAX_LINE_BYTES);
    if (line.length - 1 > limit) {
      // Refused before anything changes: no sequence number, no chain link, no byte written.
      return Promise.reject(
        new RecordError(
          'schema',
          `record ${record.seq} would be a ${line.length - 1}-byte line; a log line may hold at most ${limit} bytes (store large content outside the event)`,
          { seq: record.seq, bytes: line.length - 1, limit },
        ),
      );
    }
    this.nextSeq += 1;
    this.prev = digestRef(digest);
    this.last = record;
    const appended: Appended = { seq: record.seq, digest: this.prev, record };
    return new Promise<Appended>((resolve, reject) => {
      this.queue.push({ line, resolve: () => resolve(appended), reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      await null; // let appends made in the same tick join the first batch
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          await this.handle.write(Buffer.concat(batch.map((p) => p.line)));
          await this.handle.datasync();
          for (const p of batch) p.resolve();
        } catch (error) {
          this.failure = new Error(
            `write to ${this.path} failed; reopen the log to recover: ${(error as Error).message}`,
          );
          for (const p of [...batch, ...this.queue]) p.reject(this.failure);
          this.queue = [];
        }
      }
      this.flushing = null;
    })();
  }

  /** Waits for every pending append, then releases the file and the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.handle.close();
    this.lock.release();
  }
}
