/**
 * The key store: one JSON file per key under `<dir>/keys/`, private files mode 0600, optionally
 * encrypted with a passphrase (scrypt → AES-256-GCM, the key id as associated data so a ciphertext
 * cannot be moved under another key's name). Keys are never overwritten: creation is atomic and
 * fails if the key exists. Format: docs/formats.md#key-files.
 */
import { createCipheriv, createDecipheriv, type KeyObject, randomBytes, scryptSync } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { canonicalize, parseJson } from './canonical.js';
import { decodeBase64 } from './dsse.js';
import {
  generateKeyPair,
  KeyError,
  keyId,
  rawPrivateKey,
  rawPublicKey,
  shipId,
  toPrivateKey,
  toPublicKey,
} from './keys.js';
import { readRegularFileSync } from './regular-file.js';

export const PRIVATE_KEY_TYPE = 'tally/private-key/v1';
export const PUBLIC_KEY_TYPE = 'tally/public-key/v1';
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;

interface Encryption {
  kdf: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
  cipher: 'aes-256-gcm';
  iv: string;
  tag: string;
}

export interface PrivateKeyFile {
  type: typeof PRIVATE_KEY_TYPE;
  algorithm: 'ed25519';
  keyId: string;
  shipId: string;
  publicKey: string;
  encryption: Encryption | null;
  privateKey: string;
}

export interface PublicKeyFile {
  type: typeof PUBLIC_KEY_TYPE;
  algorithm: 'ed25519';
  keyId: string;
  shipId: string;
  publicKey: string;
}

export interface StoredKey {
  name: string;
  keyId: string;
  shipId: string;
  publicKey: KeyObject;
  encrypted: boolean;
  path: string;
}

export function keyPaths(dir: string, name: string): { privatePath: string; publicPath: string } {
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(name)) throw new KeyError('bad-key', `invalid key name '${name}'`);
  return {
    privatePath: join(dir, 'keys', `${name}.key.json`),
    publicPath: join(dir, 'keys', `${name}.pub.json`),
  };
}

function scryptKey(passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }): Buffer {
  return scryptSync(passphrase.normalize('NFC'), salt, 32, { ...params, maxmem: 256 * params.N * params.r });
}

/** Writes `data` to `path` only if nothing is there, all or nothing. */
function writeNew(path: string, data: string, mode: number): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, data, { mode, flag: 'wx' });
  try {
    linkSync(tmp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new KeyError('exists', `${path} already exists; refusing to overwrite a key`, { path });
    }
    throw error;
  } finally {
    unlinkSync(tmp);
  }
}

export function createKey(
  dir: string,
  name: string,
  options: { passphrase?: string; privateKey?: KeyObject } = {},
): StoredKey {
  const { privatePath, publicPath } = keyPaths(dir, name);
  mkdirSync(join(dir, 'keys'), { recursive: true, mode: 0o700 });
  const privateKey = options.privateKey ?? generateKeyPair().privateKey;
  const publicKey = toPublicKey(privateKey);
  const id = keyId(publicKey);
  const pub: PublicKeyFile = {
    type: PUBLIC_KEY_TYPE,
    algorithm: 'ed25519',
    keyId: id,
    shipId: shipId(publicKey),
    publicKey: rawPublicKey(publicKey).toString('base64'),
  };
  let secret = rawPrivateKey(privateKey);
  let encryption: Encryption | null = null;
  if (options.passphrase !== undefined) {
    if (options.passphrase.length === 0)
      throw new KeyError('bad-key', 'an empty passphrase would not protect the key');
    const salt = randomBytes(16);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', scryptKey(options.passphrase, salt, SCRYPT), iv);
    cipher.setAAD(Buffer.from(id));
    secret = Buffer.concat([cipher.update(secret), cipher.final()]);
    encryption = {
      kdf: 'scrypt',
      ...SCRYPT,
      salt: salt.toString('base64'),
      cipher: 'aes-256-gcm',
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
    };
  }
  const file: PrivateKeyFile = {
    ...pub,
    type: PRIVATE_KEY_TYPE,
    encryption,
    privateKey: secret.toString('base64'),
  };
  writeNew(privatePath, `${canonicalize(file)}\n`, 0o600);
  try {
    writeNew(publicPath, `${canonicalize(pub)}\n`, 0o644);
  } catch (error) {
    if ((error as KeyError).code !== 'exists') throw error;
    writeFileSync(publicPath, `${canonicalize(pub)}\n`, { mode: 0o644 }); // a stale public file is derived data
  }
  return {
    name,
    keyId: id,
    shipId: pub.shipId,
    publicKey,
    encrypted: encryption !== null,
    path: privatePath,
  };
}

/** A key file is a few hundred bytes. */
const KEY_FILE_LIMIT = 64 * 1024;

function readKeyJson(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readRegularFileSync(path, KEY_FILE_LIMIT).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new KeyError('not-found', `no key at ${path} (run 'tally init' to create one)`, { path });
    }
    throw error;
  }
  try {
    const value = parseJson(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch (error) {
    throw new KeyError('corrupt', `key file ${path} is corrupt: ${(error as Error).message}`, { path });
  }
}

function publicFromFile(file: Record<string, unknown>, path: string): KeyObject {
  try {
    const publicKey = toPublicKey(decodeBase64(String(file.publicKey), 'publicKey'));
    if (file.keyId !== keyId(publicKey)) throw new Error('keyId does not match publicKey');
    return publicKey;
  } catch (error) {
    throw new KeyError('corrupt', `key file ${path} is corrupt: ${(error as Error).message}`, { path });
  }
}

/** The public key in a Tally key file (public or private), checked against its key id. */
export function readPublicKeyFile(path: string): KeyObject {
  return publicFromFile(readKeyJson(path), path);
}

export function loadPublicKey(dir: string, name: string): StoredKey {
  const { privatePath, publicPath } = keyPaths(dir, name);
  let path = publicPath;
  let file: Record<string, unknown>;
  try {
    file = readKeyJson(publicPath);
  } catch (error) {
    if ((error as KeyError).code !== 'not-found') throw error;
    path = privatePath;
    file = readKeyJson(privatePath);
  }
  const publicKey = publicFromFile(file, path);
  // Whether the key is encrypted is a fact of the private file, when there is one.
  let encrypted = file.encryption != null;
  if (path === publicPath && existsSync(privatePath)) {
    try {
      encrypted = readKeyJson(privatePath).encryption != null;
    } catch {
      // unreadable private file: loading it for signing will say why
    }
  }
  return { name, keyId: keyId(publicKey), shipId: shipId(publicKey), publicKey, encrypted, path };
}

export function loadPrivateKey(
  dir: string,
  name: string,
  passphrase?: string,
): { key: StoredKey; privateKey: KeyObject } {
  return loadPrivateKeyFile(keyPaths(dir, name).privatePath, passphrase, name);
}

/** A private key file at any path (`tally hub serve --key FILE`), with the same checks. */
export function loadPrivateKeyFile(
  privatePath: string,
  passphrase?: string,
  name = basename(privatePath).replace(/\.key\.json$/, ''),
): { key: StoredKey; privateKey: KeyObject } {
  let mode: number;
  try {
    mode = statSync(privatePath).mode;
  } catch {
    throw new KeyError('not-found', `no key at ${privatePath} (run 'tally init' to create one)`, {
      path: privatePath,
    });
  }
  if ((mode & 0o077) !== 0) {
    throw new KeyError(
      'permissions',
      `private key ${privatePath} is readable by others (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${privatePath}`,
      { path: privatePath },
    );
  }
  const file = readKeyJson(privatePath);
  const publicKey = publicFromFile(file, privatePath);
  const id = keyId(publicKey);
  let secret = decodeBase64(String(file.privateKey), 'privateKey');
  const enc = file.encryption as Encryption | null | undefined;
  if (enc != null) {
    // Parameters come from the file: bound them, so a corrupt or hostile file cannot ask scrypt
    // for gigabytes, and report it as corrupt rather than as a wrong passphrase.
    const { N, r, p } = enc;
    const sane =
      enc.kdf === 'scrypt' &&
      enc.cipher === 'aes-256-gcm' &&
      Number.isSafeInteger(N) &&
      N >= 2 ** 10 &&
      N <= 2 ** 20 &&
      (N & (N - 1)) === 0 &&
      Number.isSafeInteger(r) &&
      r >= 1 &&
      r <= 32 &&
      Number.isSafeInteger(p) &&
      p >= 1 &&
      p <= 16;
    if (!sane) {
      throw new KeyError('corrupt', `key file ${privatePath} is corrupt: unsupported encryption parameters`, {
        path: privatePath,
      });
    }
    if (passphrase === undefined) {
      throw new KeyError(
        'passphrase-required',
        `key ${privatePath} is encrypted: give its passphrase at a terminal or on a file descriptor (TALLY_PASSPHRASE_FD=N)`,
        {
          path: privatePath,
        },
      );
    }
    try {
      const decipher = createDecipheriv(
        'aes-256-gcm',
        scryptKey(passphrase, decodeBase64(enc.salt, 'salt'), enc),
        decodeBase64(enc.iv, 'iv'),
      );
      decipher.setAAD(Buffer.from(id));
      decipher.setAuthTag(decodeBase64(enc.tag, 'tag'));
      secret = Buffer.concat([decipher.update(secret), decipher.final()]);
    } catch {
      throw new KeyError(
        'wrong-passphrase',
        `wrong passphrase for ${privatePath} (or the file was altered)`,
        {
          path: privatePath,
        },
      );
    }
  }
  let privateKey: KeyObject;
  try {
    privateKey = toPrivateKey(secret);
  } catch (error) {
    throw new KeyError('corrupt', `key file ${privatePath} is corrupt: ${(error as Error).message}`, {
      path: privatePath,
    });
  }
  if (keyId(privateKey) !== id) {
    throw new KeyError(
      'corrupt',
      `key file ${privatePath} is corrupt: private key does not match publicKey`,
      {
        path: privatePath,
      },
    );
  }
  return {
    key: { name, keyId: id, shipId: shipId(publicKey), publicKey, encrypted: enc != null, path: privatePath },
    privateKey,
  };
}
