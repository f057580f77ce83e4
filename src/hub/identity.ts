/**
 * The hub's own Ed25519 key and the log identity derived from it. The key lives in the key store
 * (`TALLY_HOME/keys/hub`, created on first start) or in a key file given with `--key`, shared by
 * every replica; it is never written to the database, which records only the public key, so a
 * replica started with another key refuses the database instead of forking the log.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { TallyError } from '../core/errors.js';
import { keyId, rawPublicKey } from '../core/keys.js';
import { createKey, keyPaths, loadPrivateKey, loadPrivateKeyFile } from '../core/keystore.js';
import { noteVerifierKey, signNote } from '../core/signed-note.js';
import { formatCheckpoint } from '../core/tlog-tiles.js';

export const HUB_KEY = 'hub';

export class HubIdentityError extends TallyError<'bad-origin'> {}

export interface HubIdentity {
  privateKey: KeyObject;
  keyId: string;
  /** Raw public key, base64. */
  publicKey: string;
  /** The checkpoint origin and the note key name. */
  origin: string;
  /** The C2SP verifier key clients pin: `<origin>+<id>+<key>`. */
  verifierKey: string;
  signCheckpoint(size: number, root: Buffer): string;
}

/** The default origin: stable for a key, so replicas sharing the key agree without configuration. */
export function defaultOrigin(publicKey: KeyObject): string {
  return `tally.hub/${keyId(publicKey).slice(4)}`;
}

export function hubIdentity(privateKey: KeyObject, origin?: string): HubIdentity {
  const name = origin ?? defaultOrigin(privateKey);
  if (!/^[^\s+]+$/u.test(name))
    throw new HubIdentityError('bad-origin', `origin ${JSON.stringify(name)} must have no spaces or '+'`);
  return {
    privateKey,
    keyId: keyId(privateKey),
    publicKey: rawPublicKey(privateKey).toString('base64'),
    origin: name,
    verifierKey: noteVerifierKey(name, privateKey),
    signCheckpoint: (size, root) =>
      signNote(formatCheckpoint({ origin: name, size, root, extensions: [] }), name, privateKey),
  };
}

/** `--key FILE`, else `<home>/keys/hub` (created when missing). */
export function loadHubKey(options: { home: string; file?: string; passphrase?: string }): {
  privateKey: KeyObject;
  path: string;
  created: boolean;
} {
  if (options.file !== undefined) {
    const loaded = loadPrivateKeyFile(options.file, options.passphrase);
    return { privateKey: loaded.privateKey, path: options.file, created: false };
  }
  const { privatePath } = keyPaths(options.home, HUB_KEY);
  const created = !existsSync(privatePath);
  if (created) createKey(options.home, HUB_KEY);
  return {
    privateKey: loadPrivateKey(options.home, HUB_KEY, options.passphrase).privateKey,
    path: privatePath,
    created,
  };
}
