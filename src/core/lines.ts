/**
 * Splitting a byte stream into `\n`-terminated lines with a length limit — one splitter for log
 * files, packages, and stdio peers. A line alone in its chunk is a view of the chunk (no copy); a
 * line spanning chunks is gathered as pieces and joined once, so a long line costs its length, not
 * its length times the chunks it spans. Each line is also handed over with its newline, the bytes as
 * they arrived, for a relay that forwards it in one write. Memory is bounded by the limit: a line
 * longer than it throws `LineTooLongError` as soon as that many bytes have arrived without a newline.
 */
import { TallyError } from './errors.js';

/** A line longer than the limit; `detail.offset` is the byte where it starts. */
export class LineTooLongError extends TallyError<'line-too-long'> {
  readonly offset: number;
  readonly limit: number;
  constructor(offset: number, limit: number) {
    super('line-too-long', `the line at byte ${offset} is longer than ${limit} bytes`, { offset, limit });
    this.offset = offset;
    this.limit = limit;
  }
}

export interface Line {
  line: Buffer;
  /** Byte offset of the line's first byte in the whole stream. */
  offset: number;
}

export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private offset = 0;

  constructor(private readonly limit: number) {}

  /**
   * Hands every complete line `chunk` ends to `onLine`, in order, with its stream offset and its
   * bytes with the newline (`raw`; `line` is a view of it). Throws `LineTooLongError` past the limit
   * (lines before it in the chunk have been handed over).
   */
  push(chunk: Buffer, onLine: (line: Buffer, offset: number, raw: Buffer) => void): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      let raw = chunk.subarray(start, nl + 1);
      if (this.parts.length > 0) {
        this.parts.push(raw);
        raw = Buffer.concat(this.parts, this.size + raw.length);
        this.parts = [];
        this.size = 0;
      }
      const line = raw.subarray(0, raw.length - 1);
      if (line.length > this.limit) throw new LineTooLongError(this.offset, this.limit);
      const offset = this.offset;
      this.offset += line.length + 1;
      start = nl + 1;
      onLine(line, offset, raw);
    }
    if (start < chunk.length) {
      this.parts.push(chunk.subarray(start));
      this.size += chunk.length - start;
      if (this.size > this.limit) throw new LineTooLongError(this.offset, this.limit);
    }
  }

  /** The bytes after the last newline (an unterminated last line), or null when there are none. */
  end(): Line | null {
    if (this.parts.length === 0) return null;
    const line = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    return { line, offset: this.offset };
  }

  /** Bytes received after the last newline. */
  get rest(): number {
    return this.size;
  }
}
