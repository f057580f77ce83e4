/** Reading a whole HTTP request body under a size limit: one reader for every server in Tally. */
import type { IncomingMessage } from 'node:http';

/**
 * The body, refused as soon as it is known to pass `limit` bytes: by its declared length before a
 * byte is read, else once the bytes read pass it. `tooLarge` makes the caller's error of the message.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  tooLarge: (message: string) => Error,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    return Promise.reject(tooLarge(`the body is ${declared} bytes; at most ${limit} are accepted`));
  // Listeners, not an async iterator: a hook's body is read on every request, and the iterator's
  // promise per chunk costs more than the read.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (error: Error) => {
      if (done) return;
      done = true;
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      fail(tooLarge(`the body is over the ${limit} bytes accepted`));
      req.destroy();
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', fail);
    // 'close' follows every body, read or not: the error (and its stack) only for one cut short.
    req.on('close', () => {
      if (!done) fail(new Error('the request was closed before its body ended'));
    });
  });
}
