/** The common front of every signed JSON write: authenticate, rate-limit the key, read and check the body. */
import { createHash, type KeyObject } from 'node:crypto';
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
  let raw: Buffer | undefined;
  let body: unknown;
  let key: KeyObject | undefined;
  if (presentedKey) {
    raw = await readBody(x.req, hub.limits.jsonBytes);
    body = parseJsonBody(raw, hub.limits);
    key = presentedKey(body);
  }
  const auth = await authenticate(x.req, {
    store: hub.store,
    publicUrl: hub.publicUrl,
    windowSeconds: hub.limits.signatureWindow,
    now: hub.now().getTime(),
    ...(key ? { presentedKey: key } : {}),
  });
  await rateLimit(hub.store, `key:${auth.keyId}`, hub.limits.perKey);
  if (raw === undefined) {
    raw = await readBody(x.req, hub.limits.jsonBytes);
    checkBodyDigest(auth, createHash('sha256').update(raw).digest());
    body = parseJsonBody(raw, hub.limits);
  } else checkBodyDigest(auth, createHash('sha256').update(raw).digest());
  return { auth, body };
}
