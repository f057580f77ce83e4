/**
 * Fetching a document an upload refers to by URL (an agent certificate hosted elsewhere): through
 * the SSRF guard on the URL and on every address its name resolves to, no redirects, a byte cap
 * and a deadline.
 */
import http from 'node:http';
import https from 'node:https';
import { checkFetchUrl, guardedLookup, SsrfError } from '../../core/ssrf.js';
import { HubHttpError } from '../server/errors.js';

export async function fetchGuarded(
  text: string,
  options: { limit: number; timeoutMs: number },
): Promise<Buffer> {
  let url: URL;
  try {
    url = checkFetchUrl(text);
  } catch (error) {
    throw new HubHttpError('fetch-refused', `not fetching ${text}: ${(error as Error).message}`, {
      detail: { reason: (error as SsrfError).code },
    });
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Buffer>((resolve, reject) => {
    const request = client.get(
      url,
      { lookup: guardedLookup as never, timeout: options.timeoutMs },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(
            new HubHttpError(
              'fetch-refused',
              `${url.host} answered ${response.statusCode} (redirects are not followed)`,
            ),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.limit) {
            request.destroy();
            reject(
              new HubHttpError('fetch-refused', `the document at ${url.host} is over ${options.limit} bytes`),
            );
          } else chunks.push(chunk);
        });
        response.on('end', () => resolve(Buffer.concat(chunks)));
        response.on('error', reject);
      },
    );
    request.on('timeout', () =>
      request.destroy(new Error(`no answer from ${url.host} in ${options.timeoutMs} ms`)),
    );
    request.on('error', (error) =>
      reject(
        error instanceof HubHttpError
          ? error
          : new HubHttpError('fetch-refused', `fetching ${url.host} failed: ${error.message}`, {
              detail: { reason: error instanceof SsrfError ? error.code : 'network' },
            }),
      ),
    );
  });
}
