/**
 * The common front of every signed JSON write: the body is read (capped) and held to the
 * Content-Digest it came with, then the signature over that digest is checked and the key
 * rate-limited, and only then is the JSON parsed and used.
 */
import { createHash, type KeyObject } from 'node:crypto';
import { contentDigestSha256 } from '../../core/content-digest.js';
import { type Authenticated, authenticate, checkBodyDigest } from './auth.js';
import type { Exchange, Hub } from './context.js';
import { HubHttpError } from './errors.js';
import { parseJsonBody, rateLimit, readBody } from './limits.js';

export function requireMediaType(x: Exchange, expected: string): void {
  const type = (x.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== expected) throw new HubHttpError('unsupported-media-type', `send Content-Type: ${expected}`);
}

export async function signedJson(
  hub: Hub,
  x: Exchange,
  presentedKey?: (body: unknown) => KeyObject | undefined,
): Promise<{ auth: Authenticated; body: unknown }> {
  requireMediaType(x, 'application/json');
  if (x.req.headers['signature-input'] === undefined)
    throw new HubHttpError('unauthenticated', 'writes need an RFC 9421 signature by the ship key');
  const raw = await readBody(x.req, hub.limits.jsonBytes);
  const sha = createHash('sha256').update(raw).digest();
  const claimed = contentDigestSha256(String(x.req.headers['content-digest'] ?? ''));
  if (!claimed?.equals(sha))
    throw new HubHttpError('digest-mismatch', 'the body does not match its Content-Digest (sha-256)');
  // First contact: the key to check the signature with is the one the body registers.
  const key = presentedKey?.(parseJsonBody(raw, hub.limits));
  const auth = await authenticate(x.req, {
    store: hub.store,
    publicUrl: hub.publicUrl,
    windowSeconds: hub.limits.signatureWindow,
    now: hub.now().getTime(),
    ...(key ? { presentedKey: key } : {}),
  });
  checkBodyDigest(auth, sha);
  await rateLimit(hub.store, [[`key:${auth.keyId}`, hub.limits.perKey]]);
  return { auth, body: parseJsonBody(raw, hub.limits) };
}
