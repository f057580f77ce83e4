/**
 * A request body as package lines, streamed: each chunk is hashed and kept (the store needs the
 * exact bytes) and split into lines for the verifier as it arrives, so verification runs while the
 * upload is still arriving. The byte cap and the line cap are enforced as bytes come in.
 */
import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LineTooLong, type LogLine, MAX_LINE_BYTES } from '../../evidence/log/reader.js';
import { HubHttpError } from '../server/errors.js';

export class BodyCapture {
  readonly chunks: Buffer[] = [];
  size = 0;
  complete = false;
  private readonly hash: Hash = createHash('sha256');
  private digestValue: Buffer | null = null;

  add(chunk: Buffer, limit: number): void {
    this.size += chunk.length;
    if (this.size > limit)
      throw new HubHttpError('body-too-large', `the package is over the ${limit} bytes accepted`);
    this.hash.update(chunk);
    this.chunks.push(chunk);
  }

  finish(): void {
    this.complete = true;
    this.digestValue = this.hash.digest();
  }

  /** SHA-256 of the whole body; null until the body was read to its end. */
  get sha256(): Buffer | null {
    return this.digestValue;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

export async function* bodyLines(
  req: IncomingMessage,
  capture: BodyCapture,
  limit: number,
): AsyncGenerator<LogLine> {
  let pieces: Buffer[] = [];
  let pending = 0;
  let offset = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    capture.add(buf, limit);
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, start)) {
      let line = buf.subarray(start, nl);
      if (pieces.length > 0) {
        pieces.push(line);
        line = Buffer.concat(pieces);
        pieces = [];
        pending = 0;
      }
      if (line.length > MAX_LINE_BYTES) throw new LineTooLong(offset, MAX_LINE_BYTES);
      yield { line, offset, torn: false };
      offset += line.length + 1;
      start = nl + 1;
    }
    if (start < buf.length) {
      pieces.push(buf.subarray(start));
      pending += buf.length - start;
      if (pending > MAX_LINE_BYTES) throw new LineTooLong(offset, MAX_LINE_BYTES);
    }
  }
  capture.finish();
  if (pieces.length > 0) yield { line: Buffer.concat(pieces), offset, torn: true };
}
