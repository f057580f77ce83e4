/** The one hash helper: SHA-256 everywhere, digests written as "sha256:<lowercase hex>". */
import * as crypto from 'node:crypto';

// The one-shot `crypto.hash` (Node 20.12 and later) skips the Hash object: a third less per call.
const oneShot = (
  crypto as { hash?: (algorithm: string, data: Uint8Array | string, encoding: string) => unknown }
).hash;

export function sha256(data: Uint8Array | string): Buffer {
  return oneShot
    ? (oneShot('sha256', data, 'buffer') as Buffer)
    : crypto.createHash('sha256').update(data).digest();
}

export function sha256Hex(data: Uint8Array | string): string {
  return oneShot
    ? (oneShot('sha256', data, 'hex') as string)
    : crypto.createHash('sha256').update(data).digest('hex');
}

/** "sha256:<hex>", the digest notation used in every Tally format. */
export function digest(data: Uint8Array | string): string {
  return `sha256:${sha256Hex(data)}`;
}

/** `digest` of data given in parts (a file read in chunks). */
export function digestParts(): { update(data: Uint8Array): void; digest(): string } {
  const hash = crypto.createHash('sha256');
  return {
    update: (data) => void hash.update(data),
    digest: () => `sha256:${hash.digest('hex')}`,
  };
}

const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

export function isDigest(value: unknown): value is string {
  return typeof value === 'string' && DIGEST_PATTERN.test(value);
}
