/**
 * What the browser bundle puts where the shared code imports `node:crypto` (the bundler aliases
 * it, scripts/build-bundles.mjs). SHA-256 is computed here synchronously (./sha256.ts); Ed25519
 * signatures are checked beforehand with WebCrypto (./prime.ts) and `verify` answers from those
 * verdicts, each bound to the exact message, key and signature it was computed for. A signature
 * nobody checked in advance does not verify: the seam fails closed. Private keys never exist here.
 */
import { Buffer } from 'buffer';
import { Sha256 } from './sha256.js';

const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);

/** An Ed25519 public key: the raw 32-byte point and its SPKI form. */
export class KeyObject {
  readonly type = 'public';
  readonly asymmetricKeyType = 'ed25519';
  constructor(readonly raw: Uint8Array) {}
  export(_options?: unknown): Buffer {
    return Buffer.concat([SPKI_PREFIX, this.raw]);
  }
}

function unsupported(name: string): never {
  throw new Error(`${name} is not available in the browser verifier`);
}

export function createPublicKey(input: unknown): KeyObject {
  if (input instanceof KeyObject) return input;
  const spec = input as { key?: unknown; format?: unknown; type?: unknown } | null;
  const der = spec?.key;
  if (spec?.format !== 'der' || spec.type !== 'spki' || !(der instanceof Uint8Array))
    return unsupported('this public key form');
  if (der.length !== 44 || !SPKI_PREFIX.every((b, i) => der[i] === b))
    throw new Error('not an Ed25519 SPKI public key');
  return new KeyObject(Uint8Array.from(der.subarray(12)));
}

export function createPrivateKey(): never {
  return unsupported('createPrivateKey');
}
export function generateKeyPairSync(): never {
  return unsupported('generateKeyPairSync');
}
export function sign(): never {
  return unsupported('sign');
}
export function createCipheriv(): never {
  return unsupported('createCipheriv');
}
export function createDecipheriv(): never {
  return unsupported('createDecipheriv');
}
export function scryptSync(): never {
  return unsupported('scryptSync');
}
/** Absent, as on Node.js before 21: the Merkle code then uses createHash. */
export const hash = undefined;

export function randomBytes(size: number): Buffer {
  const out = Buffer.alloc(size);
  globalThis.crypto.getRandomValues(out);
  return out;
}

const encoder = new TextEncoder();

class Hash {
  private readonly inner = new Sha256();
  update(data: Uint8Array | string): this {
    this.inner.update(typeof data === 'string' ? encoder.encode(data) : data);
    return this;
  }
  digest(): Buffer;
  digest(encoding: 'hex' | 'base64'): string;
  digest(encoding?: 'hex' | 'base64'): Buffer | string {
    const out = Buffer.from(this.inner.digest());
    return encoding === undefined ? out : out.toString(encoding);
  }
}

export function createHash(algorithm: string): Hash {
  if (algorithm !== 'sha256') return unsupported(`hash ${algorithm}`);
  return new Hash();
}

interface Verdict {
  message: Uint8Array;
  ok: boolean;
}

const verdicts = new Map<string, Verdict>();

function verdictKey(publicKey: Uint8Array, signature: Uint8Array): string {
  return `${Buffer.from(publicKey).toString('hex')}:${Buffer.from(signature).toString('base64')}`;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Records what WebCrypto said of one (message, key, signature). */
export function recordVerdict(
  message: Uint8Array,
  publicKey: Uint8Array,
  signature: Uint8Array,
  ok: boolean,
): void {
  verdicts.set(verdictKey(publicKey, signature), { message: Uint8Array.from(message), ok });
}

export function clearVerdicts(): void {
  verdicts.clear();
}

export function verify(
  _algorithm: null,
  message: Uint8Array,
  key: KeyObject,
  signature: Uint8Array,
): boolean {
  const verdict = verdicts.get(verdictKey(key.raw, signature));
  return verdict?.ok === true && sameBytes(verdict.message, message);
}
