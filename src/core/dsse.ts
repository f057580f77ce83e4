/**
 * DSSE envelopes (Dead Simple Signing Envelope, v1) with Ed25519.
 * PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes as ASCII decimal.
 * Verification only ever trusts keys the caller pinned; a key id in a signature is a hint for
 * choosing among pinned keys, never a source of trust.
 */
import { sign, verify } from 'node:crypto';
import { TallyError } from './errors.js';
import { keyId, type PrivateKeyInput, type PublicKeyInput, toPrivateKey, toPublicKey } from './keys.js';

export interface Signature {
  keyid?: string;
  sig: string;
}

export interface Envelope {
  payload: string;
  payloadType: string;
  signatures: Signature[];
}

export type DsseErrorCode = 'malformed' | 'bad-base64' | 'no-trusted-signature' | 'no-trusted-keys';

export class DsseError extends TallyError<DsseErrorCode> {}

const SP = Buffer.from(' ');
const PREFIX = Buffer.from('DSSEv1 ');

export function pae(payloadType: string, payload: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    PREFIX,
    Buffer.from(String(type.length)),
    SP,
    type,
    SP,
    Buffer.from(String(payload.length)),
    SP,
    payload,
  ]);
}

/**
 * Standard base64 with padding, refusing anything Buffer.from would silently skip or repair
 * (whitespace, URL-safe characters, missing padding, non-zero padding bits): the bytes must
 * re-encode to exactly the text. Linear in the input, so multi-megabyte payloads are fine.
 */
export function decodeBase64(text: string, field: string): Buffer {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) {
    throw new DsseError('bad-base64', `${field} is not canonical standard base64`, { field });
  }
  return bytes;
}

export interface SigningKey {
  privateKey: PrivateKeyInput;
  /** Defaults to the key id derived from the public key. */
  keyid?: string;
}

export function signEnvelope(
  payload: Uint8Array | string,
  payloadType: string,
  keys: PrivateKeyInput | SigningKey | (PrivateKeyInput | SigningKey)[],
): Envelope {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const message = pae(payloadType, body);
  const list = Array.isArray(keys) ? keys : [keys];
  const signatures = list.map((entry) => {
    const signing = isSigningKey(entry) ? entry : { privateKey: entry };
    const privateKey = toPrivateKey(signing.privateKey);
    return {
      keyid: signing.keyid ?? keyId(privateKey),
      sig: sign(null, message, privateKey).toString('base64'),
    };
  });
  return { payload: Buffer.from(body).toString('base64'), payloadType, signatures };
}

function isSigningKey(value: PrivateKeyInput | SigningKey): value is SigningKey {
  return !(value instanceof Uint8Array) && 'privateKey' in value;
}

export interface VerifiedEnvelope {
  payload: Buffer;
  payloadType: string;
  /** Key ids (derived from the pinned keys) whose signatures verified. */
  keyIds: string[];
}

export interface TrustedKeys {
  /** key id → public key; build with `trustKeys`. */
  byId: Map<string, ReturnType<typeof toPublicKey>>;
}

export function trustKeys(keys: readonly PublicKeyInput[]): TrustedKeys {
  const byId = new Map<string, ReturnType<typeof toPublicKey>>();
  for (const key of keys) {
    const publicKey = toPublicKey(key);
    byId.set(keyId(publicKey), publicKey);
  }
  return { byId };
}

/** Structural check of untrusted JSON before anything is decoded. */
export function asEnvelope(value: unknown): Envelope {
  const v = value as Partial<Envelope> | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new DsseError('malformed', 'envelope is not an object');
  if (typeof v.payload !== 'string') throw new DsseError('malformed', 'envelope.payload must be a string');
  if (typeof v.payloadType !== 'string')
    throw new DsseError('malformed', 'envelope.payloadType must be a string');
  if (!Array.isArray(v.signatures) || v.signatures.length === 0) {
    throw new DsseError('malformed', 'envelope.signatures must be a non-empty array');
  }
  v.signatures.forEach((s, i) => {
    if (typeof s !== 'object' || s === null || typeof s.sig !== 'string') {
      throw new DsseError('malformed', `envelope.signatures[${i}].sig must be a string`);
    }
    if (s.keyid !== undefined && typeof s.keyid !== 'string') {
      throw new DsseError('malformed', `envelope.signatures[${i}].keyid must be a string`);
    }
  });
  return v as Envelope;
}

/**
 * Verifies that at least `threshold` distinct pinned keys signed the envelope. Throws DsseError
 * when that is not so; returns the decoded payload when it is.
 */
export interface VerifyEnvelopeOptions {
  /** How many distinct pinned keys must have signed (default 1). */
  threshold?: number;
  /**
   * For Tally's own formats: every signature must carry a `keyid` naming a pinned key, and must
   * verify under exactly that key. Nothing unverified then rides along in a signed file, so even
   * a changed key id hint is detected.
   */
  strict?: boolean;
}

/**
 * Verifies that at least `threshold` distinct pinned keys signed the envelope. Throws DsseError
 * when that is not so; returns the decoded payload when it is.
 */
export function verifyEnvelope(
  envelope: unknown,
  trusted: TrustedKeys | readonly PublicKeyInput[],
  options: number | VerifyEnvelopeOptions = {},
): VerifiedEnvelope {
  const { threshold = 1, strict = false } = typeof options === 'number' ? { threshold: options } : options;
  const env = asEnvelope(envelope);
  const pinned = 'byId' in trusted ? trusted : trustKeys(trusted);
  if (pinned.byId.size === 0) throw new DsseError('no-trusted-keys', 'no trusted public keys were given');
  const payload = decodeBase64(env.payload, 'payload');
  const message = pae(env.payloadType, payload);
  const verified = new Set<string>();
  env.signatures.forEach((signature, i) => {
    const sig = decodeBase64(signature.sig, `signatures[${i}].sig`);
    const hinted = signature.keyid === undefined ? undefined : pinned.byId.get(signature.keyid);
    if (strict && (hinted === undefined || sig.length !== 64 || !verify(null, message, hinted, sig))) {
      throw new DsseError(
        'no-trusted-signature',
        `signatures[${i}] ${signature.keyid === undefined ? 'has no keyid' : `does not verify under the pinned key it names (${signature.keyid})`}`,
        { signature: i },
      );
    }
    if (sig.length !== 64) return;
    const candidates = hinted ? [[signature.keyid!, hinted] as const] : [...pinned.byId.entries()];
    for (const [id, key] of candidates) {
      if (verified.has(id)) break;
      if ((strict && id === signature.keyid) || verify(null, message, key, sig)) {
        verified.add(id);
        break;
      }
    }
  });
  if (verified.size < threshold) {
    throw new DsseError(
      'no-trusted-signature',
      threshold === 1
        ? 'no signature on the envelope verifies with a trusted key'
        : `only ${verified.size} of the required ${threshold} trusted keys signed the envelope`,
      { verified: verified.size, threshold },
    );
  }
  return { payload, payloadType: env.payloadType, keyIds: [...verified].sort() };
}
