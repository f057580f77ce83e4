/** The one hash helper: SHA-256 everywhere, digests written as "sha256:<lowercase hex>". */
import { createHash } from 'node:crypto';

export function sha256(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(data).digest();
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** "sha256:<hex>", the digest notation used in every Tally format. */
export function digest(data: Uint8Array | string): string {
  return `sha256:${sha256Hex(data)}`;
}

const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

export function isDigest(value: unknown): value is string {
  return typeof value === 'string' && DIGEST_PATTERN.test(value);
}
