/** Reading a whole HTTP request body under a size limit: one reader for every server in Tally. */
import type { IncomingMessage } from 'node:http';

/**
 * The body, refused as soon as it is known to pass `limit` bytes: by its declared length before a
 * byte is read, else once the bytes read pass it. `tooLarge` makes the caller's error of the message.
 */
export async function readBody(
  req: IncomingMessage,
  limit: number,
  tooLarge: (message: string) => Error,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    throw tooLarge(`the body is ${declared} bytes; at most ${limit} are accepted`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(`the body is over the ${limit} bytes accepted`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
