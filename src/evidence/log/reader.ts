/**
 * Reading and verifying a session log in constant memory. `ChainVerifier` checks one line at a
 * time (parse → signature → schema → session → sequence → chain) and is shared by the file
 * reader here and by package verification, so there is one definition of a valid log.
 */

import { type TrustedKeys, trustKeys, verifyEnvelope } from '../../core/dsse.js';
import { sha256 } from '../../core/hash.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { LineSplitter, LineTooLongError } from '../../core/lines.js';
import { openRegular } from '../../core/regular-file.js';
import {
  decodeRecordPayload,
  digestRef,
  MAX_LINE_BYTES,
  parseEnvelopeLine,
  type RecordCheck,
  RecordError,
} from '../record/codec.js';
import type { EventRecord } from '../record/record.js';

export interface LogIssue {
  check: RecordCheck;
  /** The sequence number the bad line claims, when it could be read; else the one expected. */
  seq: number;
  /** Byte offset of the line's first byte in the log. */
  offset: number;
  message: string;
}

export interface CheckedRecord {
  record: EventRecord;
  /** SHA-256 of the canonical payload (the Merkle leaf and the next record's `prev`). */
  digest: Buffer;
  keyIds: string[];
}

/** The checks one line needs on its own (parse → signature → schema): no order, no state. */
export type LineCheck =
  | { ok: true; record: EventRecord; payload: Buffer; keyIds: string[] }
  | { ok: false; check: RecordCheck; message: string };

/**
 * Parses a line, verifies its signature against the pinned keys and decodes the payload. Pure, so
 * it runs on any thread; `ChainVerifier` adds the checks that depend on the records before it.
 */
export function checkLine(line: Buffer | string, trusted: TrustedKeys): LineCheck {
  let payload: Buffer;
  let keyIds: string[];
  try {
    const envelope = parseEnvelopeLine(line);
    try {
      ({ payload, keyIds } = verifyEnvelope(envelope, trusted, { strict: true }));
    } catch (error) {
      return { ok: false, check: 'signature', message: (error as Error).message };
    }
    return { ok: true, record: decodeRecordPayload(payload), payload, keyIds };
  } catch (error) {
    if (error instanceof RecordError) return { ok: false, check: error.code, message: error.message };
    throw error;
  }
}

export class ChainVerifier {
  private expectedSeq = 0;
  private prev: string | null = null;
  private session: string | undefined;
  readonly trusted: TrustedKeys;
  /** The record version every record must have (a package's format fixes it), when set. */
  private readonly version: 1 | 2 | undefined;

  constructor(trusted: TrustedKeys | readonly PublicKeyInput[], session?: string, version?: 1 | 2) {
    this.trusted = 'byId' in trusted ? trusted : trustKeys(trusted);
    this.session = session;
    this.version = version;
  }

  get count(): number {
    return this.expectedSeq;
  }

  /** Checks the next line; throws a LogIssue-shaped RecordError on the first failed check. */
  check(line: Buffer | string, offset: number): CheckedRecord {
    const checked = checkLine(line, this.trusted);
    if (!checked.ok) return this.reject(checked.check, checked.message, offset);
    return this.accept(checked.record, sha256(checked.payload), checked.keyIds, offset);
  }

  /** Reports a line that failed `checkLine`, at the sequence number expected there. */
  reject(check: RecordCheck, message: string, offset: number): never {
    throw new RecordError(check, message, { check, seq: this.expectedSeq, offset });
  }

  /** The checks that need the records before: session, sequence, chain. */
  accept(record: EventRecord, digest: Buffer, keyIds: string[], offset: number): CheckedRecord {
    const fail = (check: RecordCheck, message: string): never => {
      throw new RecordError(check, message, { check, seq: record.seq, offset });
    };
    if (this.version !== undefined && record.v !== this.version) {
      fail('schema', `record is v${record.v} in a package of v${this.version} records`);
    }
    if (this.session === undefined) this.session = record.session;
    if (record.session !== this.session) {
      fail('session', `record belongs to session ${record.session}, expected ${this.session}`);
    }
    if (record.seq !== this.expectedSeq) {
      fail('sequence', `sequence number ${record.seq} where ${this.expectedSeq} was expected`);
    }
    if (record.prev !== this.prev) {
      fail(
        'chain',
        `prev is ${record.prev ?? 'null'} but the previous record's digest is ${this.prev ?? 'null (first record)'}`,
      );
    }
    this.prev = digestRef(digest);
    this.expectedSeq += 1;
    return { record, digest, keyIds };
  }
}

export function asLogIssue(error: unknown): LogIssue | null {
  if (!(error instanceof RecordError) || !error.detail) return null;
  return {
    check: error.code,
    seq: error.detail.seq as number,
    offset: error.detail.offset as number,
    message: error.message,
  };
}

export interface LogLine {
  line: Buffer;
  offset: number;
  /** True for trailing bytes with no final newline: a torn append. */
  torn: boolean;
}

export { MAX_LINE_BYTES } from '../record/codec.js';

/** A line longer than the limit (a `parse` failure); `detail.offset` is where it starts. */
export class LineTooLong extends RecordError {
  readonly offset: number;
  constructor(offset: number, limit: number) {
    super(
      'parse',
      `the line at byte ${offset} is longer than ${limit} bytes, the longest a record or seal line may be`,
      { offset, limit },
    );
    this.offset = offset;
  }
}

/** Index of the last byte of `chunk` that is not zero, or -1 when every byte is. */
function lastNonZero(chunk: Buffer): number {
  let i = chunk.length - 1;
  while (i >= 0 && chunk[i] === 0) i--;
  return i;
}

/**
 * Streams the lines of a file with their byte offsets (core/lines.ts), holding at most one chunk
 * plus one line; a line longer than `maxLineBytes` throws `LineTooLong` as soon as that many bytes
 * have been read without a newline. Zero bytes that run to the end of the file are the space a
 * writing store reserved ahead of its appends (./file-store.ts, docs/formats.md), not content: a
 * run of zeros is held back until a byte that is not zero follows it, and dropped at the end.
 */
export async function* readLogLines(path: string, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<LogLine> {
  const splitter = new LineSplitter(maxLineBytes);
  const ready: LogLine[] = [];
  const take = (line: Buffer, offset: number) => {
    ready.push({ line, offset, torn: false });
  };
  let zeros = 0;
  try {
    // Opened as a regular file only: a FIFO or a device put at the log's path is refused, not waited on.
    const handle = await openRegular(path);
    for await (const chunk of handle.createReadStream({ highWaterMark: 256 * 1024 })) {
      const bytes = chunk as Buffer;
      const last = lastNonZero(bytes);
      if (last < 0) {
        zeros += bytes.length;
        continue;
      }
      // Zeros followed by content are content: handed on as they were.
      if (zeros > 0) splitter.push(Buffer.alloc(zeros), take);
      splitter.push(last === bytes.length - 1 ? bytes : bytes.subarray(0, last + 1), take);
      zeros = bytes.length - 1 - last;
      for (const line of ready) yield line;
      ready.length = 0;
    }
  } catch (error) {
    if (error instanceof LineTooLongError) {
      for (const line of ready) yield line;
      throw new LineTooLong(error.offset, maxLineBytes);
    }
    throw error;
  }
  const rest = splitter.end();
  if (rest) yield { ...rest, torn: true };
}

export interface LogVerification {
  ok: boolean;
  records: number;
  bytes: number;
  issue: LogIssue | null;
  lastDigest: string | null;
}

export interface VerifyLogOptions {
  trusted: TrustedKeys | readonly PublicKeyInput[];
  session?: string;
  /** Called with each record that passed every check, in order. */
  onRecord?: (checked: CheckedRecord) => void;
}

export async function verifyLogFile(path: string, options: VerifyLogOptions): Promise<LogVerification> {
  const verifier = new ChainVerifier(options.trusted, options.session);
  let bytes = 0;
  let lastDigest: string | null = null;
  const failed = (issue: LogIssue): LogVerification => ({
    ok: false,
    records: verifier.count,
    bytes,
    issue,
    lastDigest,
  });
  try {
    for await (const { line, offset, torn } of readLogLines(path)) {
      if (torn) {
        return failed({
          check: 'parse',
          seq: verifier.count,
          offset,
          message: `torn last line: ${line.length} bytes with no final newline (an append that never completed)`,
        });
      }
      try {
        const checked = verifier.check(line, offset);
        lastDigest = digestRef(checked.digest);
        options.onRecord?.(checked);
      } catch (error) {
        const issue = asLogIssue(error);
        if (!issue) throw error;
        return failed(issue);
      }
      bytes = offset + line.length + 1;
    }
  } catch (error) {
    if (!(error instanceof LineTooLong)) throw error;
    return failed({ check: 'parse', seq: verifier.count, offset: error.offset, message: error.message });
  }
  return { ok: true, records: verifier.count, bytes, issue: null, lastDigest };
}
