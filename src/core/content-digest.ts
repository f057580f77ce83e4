/**
 * The Content-Digest field of RFC 9530 with sha-256: `sha-256=:<base64 digest>:`. Other algorithms
 * in the field are ignored; a field without sha-256 does not match.
 */
import { createHash } from 'node:crypto';
import { parseDictionary } from './structured-fields.js';

export function contentDigestOf(sha256Digest: Uint8Array): string {
  return `sha-256=:${Buffer.from(sha256Digest).toString('base64')}:`;
}

/** The field value for a body. */
export function contentDigest(body: Uint8Array | string): string {
  return contentDigestOf(createHash('sha256').update(body).digest());
}

/** The sha-256 digest the field names, or null when it names none or is not a valid field. */
export function contentDigestSha256(field: string): Buffer | null {
  try {
    const member = parseDictionary(field).get('sha-256');
    if (member?.kind !== 'item' || member.value.type !== 'bytes' || member.value.value.length !== 32)
      return null;
    return member.value.value;
  } catch {
    return null;
  }
}
