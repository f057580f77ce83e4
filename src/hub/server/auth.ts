/**
 * Authenticating a write: an RFC 9421 signature by the ship key over @method, @target-uri,
 * @authority and content-digest, with `created` inside the window and a `nonce` never used before
 * by that key (the nonce cache is in the shared store, so a replay to another replica fails too).
 * The signature proves possession of the key; the body is then held to the signed content-digest.
 * No passwords, no bearer tokens.
 */
import type { KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { contentDigestSha256 } from '../../core/content-digest.js';
import {
  HttpSignatureError,
  type ParsedSignature,
  parseSignatures,
  type SignedRequest,
  verifyRequestSignature,
} from '../../core/http-signature.js';
import { keyId, shipId, toPublicKey } from '../../core/keys.js';
import { SIGNED_COMPONENTS, signedComponents } from '../../hub-client/wire.js';
import type { HubStore } from '../store/hub-store.js';
import { HubHttpError } from './errors.js';

export interface Authenticated {
  keyId: string;
  shipId: string;
  publicKey: KeyObject;
  /** The sha-256 the signed content-digest names: the body must hash to it. */
  bodySha256: Buffer;
}

/** The request as signed: its target URI rebuilt from the hub's public URL, or from Host. */
export function signedRequestOf(req: IncomingMessage, publicUrl: URL | null): SignedRequest {
  const base = publicUrl ? publicUrl.origin : `http://${req.headers.host ?? 'localhost'}`;
  return {
    method: req.method ?? 'GET',
    url: `${base}${req.url ?? '/'}`,
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** The signature covering every component this request must have signed (signedComponents). */
function pick(signatures: ParsedSignature[], request: SignedRequest): ParsedSignature {
  const needed = signedComponents(request.header);
  const covering = signatures.find((s) => needed.every((c) => s.components.includes(c)));
  if (!covering)
    throw new HubHttpError(
      'unauthenticated',
      `the signature must cover ${needed.join(', ')}${needed.length > SIGNED_COMPONENTS.length ? ' (a Tally-Certificate or Tally-Certificate-Url field sent is covered too)' : ''}`,
    );
  return covering;
}

export interface AuthOptions {
  store: HubStore;
  publicUrl: URL | null;
  windowSeconds: number;
  now?: number;
  /** For first contact: the key the body claims, used when the key id is not registered yet. */
  presentedKey?: KeyObject;
}

export async function authenticate(req: IncomingMessage, options: AuthOptions): Promise<Authenticated> {
  const request = signedRequestOf(req, options.publicUrl);
  let signature: ParsedSignature;
  try {
    signature = pick(parseSignatures(request), request);
  } catch (error) {
    if (error instanceof HubHttpError) throw error;
    const missing = error instanceof HttpSignatureError && error.code === 'missing';
    throw new HubHttpError(
      'unauthenticated',
      `${(error as Error).message}; writes need an RFC 9421 signature by the ship key`,
      {
        detail: { reason: missing ? 'missing' : 'malformed' },
      },
    );
  }
  const { created, nonce, keyid, expires } = signature.params;
  if (keyid === undefined || !/^key_[0-9a-f]{32}$/.test(keyid))
    throw new HubHttpError('unauthenticated', 'the signature needs keyid="key_…" (the ship key id)');
  if (nonce === undefined || nonce.length < 8 || nonce.length > 128)
    throw new HubHttpError('unauthenticated', 'the signature needs a nonce of 8 to 128 characters');
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (created === undefined || Math.abs(now - created) > options.windowSeconds)
    throw new HubHttpError(
      'stale-signature',
      `the signature's created time must be within ${options.windowSeconds}s of the hub's clock`,
      {
        detail: { created: created ?? null, now },
      },
    );
  if (expires !== undefined && expires <= now)
    throw new HubHttpError('stale-signature', 'the signature has expired');
  const ship = `ship_${keyid.slice(4)}`;
  let publicKey: KeyObject;
  const registered = await options.store.ship(ship);
  if (registered) publicKey = toPublicKey(Buffer.from(registered.public_key, 'base64'));
  else if (options.presentedKey && keyId(options.presentedKey) === keyid) publicKey = options.presentedKey;
  else
    throw new HubHttpError(
      'unknown-key',
      `${keyid} is not registered here; register the ship first (PUT /v1/ships/${ship})`,
      {
        detail: { ship_id: ship },
      },
    );
  let verified: boolean;
  try {
    verified = verifyRequestSignature(request, signature, publicKey);
  } catch (error) {
    throw new HubHttpError('unauthenticated', (error as Error).message);
  }
  if (!verified)
    throw new HubHttpError('bad-signature', `the request signature does not verify under ${keyid}`);
  const bodySha256 = contentDigestSha256(request.header('content-digest') ?? '');
  if (!bodySha256)
    throw new HubHttpError('digest-mismatch', 'the signed Content-Digest has no sha-256 member');
  const expiresAt = (created + options.windowSeconds) * 1000 + 1000;
  if (!(await options.store.useNonce(keyid, nonce, expiresAt)))
    throw new HubHttpError('replayed', 'this request was already received (its nonce was used)');
  return { keyId: keyid, shipId: shipId(publicKey), publicKey, bodySha256 };
}

/** The body must be the one the signature covered. */
export function checkBodyDigest(auth: Authenticated, actual: Buffer): void {
  if (!actual.equals(auth.bodySha256))
    throw new HubHttpError('digest-mismatch', 'the body does not match the signed Content-Digest');
}
