/**
 * The ship key that signs, and the keys a verifier trusts — both outside the project tree, which the
 * agent can write. The private ship key lives in `TALLY_HOME/keys/`; its public key, and the keys of
 * other ships the user chose to trust, are pinned in `TALLY_HOME/trust/`. A project's `.tally/keys/`
 * holds only its public key (committable, so reviewers know which ship signs for it) — never a
 * trust root: a key found only in the tree being verified is reported as repository-provided.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize } from '../core/canonical.js';
import { tallyHome } from '../core/home.js';
import { keyId as idOf, KeyError, rawPublicKey, shipId as shipOf } from '../core/keys.js';
import {
  keyPaths,
  loadPrivateKey,
  loadPublicKey,
  PUBLIC_KEY_TYPE,
  readPublicKeyFile,
  type StoredKey,
} from '../core/keystore.js';
import type { Signer } from '../evidence/record/codec.js';
import type { Places } from './paths.js';

export const SHIP_KEY = 'ship';
/** The person's approver key, in `TALLY_HOME/keys/` beside the ship key (always encrypted). */
export const APPROVER_KEY = 'approver';

/** Where the user's ship key is kept: the Tally home, never a project tree. */
export function shipKeyDir(where: Places): string {
  if (
    where.project !== null &&
    where.project !== where.home &&
    existsSync(keyPaths(where.project, SHIP_KEY).privatePath)
  ) {
    throw new KeyError(
      'in-tree',
      `the ship's private key is inside the project tree (${keyPaths(where.project, SHIP_KEY).privatePath}), where an agent can read or replace it: run 'tally init' to move it to ${join(where.home, 'keys')}`,
    );
  }
  if (existsSync(keyPaths(where.home, SHIP_KEY).privatePath)) return where.home;
  throw new KeyError('not-found', `no ship key in ${join(where.home, 'keys')}: run 'tally init' first`);
}

export interface ShipSigner extends Signer {
  key: StoredKey;
  privateKey: KeyObject;
  /** The Tally home the key was loaded from: where the chain heads of its sessions are kept. */
  home?: string;
}

/** The Tally home a signer's key was loaded from (its sessions' chain heads, its pinned keys), else this process's. */
export function signerHome(signer: ShipSigner): string {
  return signer.home ?? tallyHome(process.env);
}

/** The project's committed public key, when it has one. */
export function projectPublicKey(where: Places): StoredKey | null {
  if (where.project === null || where.project === where.home) return null;
  try {
    return loadPublicKey(where.project, SHIP_KEY);
  } catch (error) {
    if ((error as KeyError).code === 'not-found') return null;
    throw error;
  }
}

/**
 * The user's ship signer. `passphrase` is asked only when the key turns out to be encrypted. A
 * project whose committed public key is another ship's is refused: it was signed for by someone else.
 */
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
  const committed = projectPublicKey(where);
  if (committed !== null && committed.keyId !== loaded.key.keyId) {
    throw new KeyError(
      'mismatch',
      `this project's committed ship key is ${committed.keyId} (${committed.path}), but your ship key is ${loaded.key.keyId}: sessions here would be signed by another ship. Use the ship the project names, or, if the project now belongs to your ship, replace its public key deliberately ('tally init --adopt')`,
    );
  }
  return { key: loaded.key, privateKey: loaded.privateKey, keyId: loaded.key.keyId, home: where.home };
}

export function trustDir(home: string): string {
  return join(home, 'trust');
}

/** Pins a public key in `TALLY_HOME/trust/<key id>.pub.json`; returns the file. */
export function pinKey(home: string, publicKey: KeyObject): string {
  return pinKeyIn(trustDir(home), publicKey);
}

/** Every key pinned in the Tally home: the trust roots of `tally verify` (with `--trust`). */
export function pinnedKeys(home: string): StoredKey[] {
  return keysIn(trustDir(home));
}

/** The approvers a verifier pins: people whose signed approvals count (`TALLY_HOME/trust/approvers/`). */
export function approversDir(home: string): string {
  return join(trustDir(home), 'approvers');
}

export function pinApprover(home: string, publicKey: KeyObject): string {
  return pinKeyIn(approversDir(home), publicKey);
}

export function pinnedApprovers(home: string): StoredKey[] {
  return keysIn(approversDir(home));
}

/** Writes `<key id>.pub.json` for `publicKey` in `dir`; returns the file. */
function pinKeyIn(dir: string, publicKey: KeyObject): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = idOf(publicKey);
  const path = join(dir, `${id}.pub.json`);
  const file = {
    type: PUBLIC_KEY_TYPE,
    algorithm: 'ed25519',
    keyId: id,
    shipId: shipOf(publicKey),
    publicKey: rawPublicKey(publicKey).toString('base64'),
  };
  writeFileSync(path, `${canonicalize(file)}\n`, { mode: 0o644 });
  return path;
}

/** The public keys pinned in `dir`, each once, in file-name order. */
function keysIn(dir: string): StoredKey[] {
  const out: StoredKey[] = [];
  const seen = new Set<string>();
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.pub.json'))
    .sort()) {
    const path = join(dir, name);
    const publicKey = readPublicKeyFile(path);
    const id = idOf(publicKey);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({
      name: name.slice(0, -'.pub.json'.length),
      keyId: id,
      shipId: shipOf(publicKey),
      publicKey,
      encrypted: false,
      path,
    });
  }
  return out;
}

/** The keys a verifier pins by default: the home's trust store, never a key from the tree. */
export function defaultTrustedKeys(where: Places): StoredKey[] {
  return pinnedKeys(where.home);
}

/** Public keys found in the project tree: named in diagnostics, never trusted for being there. */
export function repositoryKeys(where: Places): StoredKey[] {
  const committed = projectPublicKey(where);
  return committed ? [committed] : [];
}
