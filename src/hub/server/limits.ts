/**
 * Hostile-input limits: bodies read with a byte cap (refused as soon as the cap is passed), JSON
 * refused past a nesting depth before it is parsed, and fixed-window rate limits counted in the
 * shared store so every replica sees the same counts.
 */

import type { IncomingMessage } from 'node:http';
import { parseJson } from '../../core/canonical.js';
import { readBody as readLimited } from '../../core/http-body.js';
import type { HubStore } from '../store/hub-store.js';
import { HubHttpError } from './errors.js';

export interface HubLimits {
  /** Largest package upload, bytes. */
  packageBytes: number;
  /** Largest JSON body (certificates, heads, registrations), bytes. */
  jsonBytes: number;
  /** Deepest JSON nesting accepted. */
  jsonDepth: number;
  /** Requests per minute from one IP address (all routes). */
  perIp: number;
  /** Signed writes per minute by one key. */
  perKey: number;
  /** How far a signature's `created` may be from the hub's clock, seconds. */
  signatureWindow: number;
}

export const DEFAULT_LIMITS: HubLimits = {
  packageBytes: 256 * 1024 * 1024,
  jsonBytes: 1024 * 1024,
  jsonDepth: 32,
  perIp: 600,
  perKey: 120,
  signatureWindow: 300,
};

/** Reads a whole body, refusing it once it passes `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return readLimited(req, limit, (message) => new HubHttpError('body-too-large', message));
}

/** The deepest nesting of arrays and objects in JSON text, scanning outside strings only. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

export function parseJsonBody(body: Buffer, limits: HubLimits): unknown {
  const text = body.toString('utf8');
  if (jsonDepth(text) > limits.jsonDepth)
    throw new HubHttpError('too-deep', `the JSON nests deeper than ${limits.jsonDepth} levels`);
  try {
    return parseJson(text);
  } catch (error) {
    throw new HubHttpError('bad-json', `the body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Counts one request in this minute's window for each bucket; refuses past a bucket's limit. */
export async function rateLimit(
  store: HubStore,
  limits: readonly (readonly [bucket: string, limit: number])[],
  now = Date.now(),
): Promise<void> {
  const window = Math.floor(now / 60_000) * 60_000;
  const counts = await store.hit(
    limits.map(([bucket]) => bucket),
    window,
  );
  limits.forEach(([bucket, limit], i) => {
    if ((counts[i] ?? 0) <= limit) return;
    const retry = Math.ceil((window + 60_000 - now) / 1000);
    throw new HubHttpError(
      'rate-limited',
      `more than ${limit} requests a minute for this ${bucket.split(':')[0]}; retry in ${retry}s`,
      {
        detail: { retry_after: retry },
      },
    );
  });
}
