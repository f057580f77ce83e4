/**
 * The ship key that signs for this project, and the keys a verifier pins by default. The project's
 * key wins over the global one; an encrypted key needs its passphrase from the caller.
 */

import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { KeyError } from '../core/keys.js';
import { keyPaths, loadPrivateKey, loadPublicKey, type StoredKey } from '../core/keystore.js';
import type { Signer } from '../evidence/record/codec.js';
import type { Places } from './paths.js';

export const SHIP_KEY = 'ship';

export function shipKeyDir(where: Places): string {
  for (const dir of [where.project, where.home]) {
    if (dir && existsSync(keyPaths(dir, SHIP_KEY).privatePath)) return dir;
  }
  throw new KeyError(
    'not-found',
    `no ship key in ${where.project ?? '(no project .tally/)'} or ${where.home}: run 'tally init' first`,
  );
}

export interface ShipSigner extends Signer {
  key: StoredKey;
  privateKey: KeyObject;
}

/** `passphrase` is asked only when the key turns out to be encrypted. */
export async function loadShipSigner(
  where: Places,
  passphrase: () => Promise<string | undefined>,
): Promise<ShipSigner> {
  const dir = shipKeyDir(where);
  let loaded: ReturnType<typeof loadPrivateKey>;
  try {
    loaded = loadPrivateKey(dir, SHIP_KEY);
  } catch (error) {
    // Only the private key file says whether it is encrypted; ask for the passphrase then.
    if ((error as KeyError).code !== 'passphrase-required') throw error;
    loaded = loadPrivateKey(dir, SHIP_KEY, await passphrase());
  }
  return { key: loaded.key, privateKey: loaded.privateKey, keyId: loaded.key.keyId };
}

/** The ship keys of the project and of the Tally home: the default pinned roots for verify. */
export function defaultTrustedKeys(where: Places): StoredKey[] {
  const keys: StoredKey[] = [];
  for (const dir of new Set([where.project, where.home])) {
    if (!dir) continue;
    try {
      keys.push(loadPublicKey(dir, SHIP_KEY));
    } catch (error) {
      if ((error as KeyError).code !== 'not-found') throw error;
    }
  }
  return keys;
}
