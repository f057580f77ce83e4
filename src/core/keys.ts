/**
 * Ed25519 keys via node:crypto, and the identifiers derived from a public key.
 * Keys may be passed as KeyObjects or as raw 32-byte values (seed for private, point for public).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { TallyError } from './errors.js';
import { sha256 } from './hash.js';

export type KeyErrorCode =
  | 'bad-key'
  | 'not-found'
  | 'exists'
  | 'permissions'
  | 'corrupt'
  | 'passphrase-required'
  | 'wrong-passphrase'
  | 'in-tree'
  | 'mismatch';

export class KeyError extends TallyError<KeyErrorCode> {}

export type PrivateKeyInput = KeyObject | Uint8Array;
export type PublicKeyInput = KeyObject | Uint8Array;

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function generateKeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ed25519');
}

export function toPrivateKey(key: PrivateKeyInput): KeyObject {
  if (!(key instanceof Uint8Array)) {
    if (key.type !== 'private' || key.asymmetricKeyType !== 'ed25519') {
      throw new KeyError(
        'bad-key',
        `expected an Ed25519 private key, got a ${key.asymmetricKeyType ?? ''} ${key.type} key`,
      );
    }
    return key;
  }
  if (key.length !== 32)
    throw new KeyError('bad-key', `a raw Ed25519 private key is 32 bytes, got ${key.length}`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, key]), format: 'der', type: 'pkcs8' });
}

export function toPublicKey(key: KeyObject | Uint8Array): KeyObject {
  if (!(key instanceof Uint8Array)) {
    if (key.asymmetricKeyType !== 'ed25519') {
      throw new KeyError(
        'bad-key',
        `expected an Ed25519 key, got ${key.asymmetricKeyType ?? 'a secret key'}`,
      );
    }
    return key.type === 'private' ? createPublicKey(key) : key;
  }
  if (key.length !== 32)
    throw new KeyError('bad-key', `a raw Ed25519 public key is 32 bytes, got ${key.length}`);
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, key]), format: 'der', type: 'spki' });
}

/** The raw 32-byte public point. A Uint8Array given here is taken as a public key, never a seed. */
export function rawPublicKey(key: KeyObject | Uint8Array): Buffer {
  const der = toPublicKey(key).export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32);
}

export function rawPrivateKey(key: PrivateKeyInput): Buffer {
  const der = toPrivateKey(key).export({ format: 'der', type: 'pkcs8' });
  return der.subarray(der.length - 32);
}

/**
 * Key id: "key_" + the first 16 bytes (hex) of SHA-256 over the raw 32-byte public key.
 * The ship id is the same fingerprint of the ship key, "ship_" + 16 bytes hex: a project's identity
 * is its key, so a ship id can always be checked against the key that signs for it.
 */
export function keyId(publicKey: PublicKeyInput): string {
  return `key_${fingerprint(publicKey)}`;
}

export function shipId(publicKey: PublicKeyInput): string {
  return `ship_${fingerprint(publicKey)}`;
}

function fingerprint(publicKey: PublicKeyInput): string {
  return sha256(rawPublicKey(publicKey)).subarray(0, 16).toString('hex');
}
