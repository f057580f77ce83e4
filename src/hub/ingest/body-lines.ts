/**
 * A request body as package lines, streamed: each chunk is hashed and kept (the store needs the
 * exact bytes) and split into lines for the verifier as it arrives, so verification runs while the
 * upload is still arriving. The byte cap and the line cap are enforced as bytes come in.
 */
import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LineSplitter, LineTooLongError } from '../../core/lines.js';
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
  const splitter = new LineSplitter(MAX_LINE_BYTES);
  const ready: LogLine[] = [];
  try {
    for await (const chunk of req) {
      capture.add(chunk as Buffer, limit);
      splitter.push(chunk as Buffer, (line, offset) => ready.push({ line, offset, torn: false }));
      yield* ready.splice(0);
    }
  } catch (error) {
    // The verifier reports an overlong line as its own failure, at its offset.
    if (error instanceof LineTooLongError) throw new LineTooLong(error.offset, MAX_LINE_BYTES);
    throw error;
  }
  capture.finish();
  const rest = splitter.end();
  if (rest) yield { ...rest, torn: true };
}
