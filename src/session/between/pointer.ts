/**
 * The project pointer: where the last session closed in a root left its package, kept in the Tally
 * home (outside the project), so that the next start finds that session even when the project's
 * own `.tally/` no longer names it, and notices a package that vanished.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize, parseJson } from '../../core/canonical.js';
import { isDigest, sha256Hex } from '../../core/hash.js';
import { isJsonObject } from '../../core/json.js';
import { type PublicKeyInput, toPublicKey } from '../../core/keys.js';
import { readRegularFileOrNull } from '../../core/regular-file.js';
import { pinnedKeys, type ShipSigner, signerHome } from '../identity.js';
import { type SessionInfo, writeAtomic } from '../store.js';

export const POINTER_TYPE = 'tally/project-pointer/v1';

/** The most a pointer file may hold. */
const POINTER_LIMIT = 64 * 1024;

export interface ProjectPointer {
  type: typeof POINTER_TYPE;
  root: string;
  session: string;
  package: string;
  package_digest: string;
  closed_at: string;
}

/** `TALLY_HOME/projects/<sha256 hex of the root>.json`. */
export function pointerPath(home: string, root: string): string {
  return join(home, 'projects', `${sha256Hex(root)}.json`);
}

export function writePointer(home: string, pointer: Omit<ProjectPointer, 'type'>): void {
  mkdirSync(join(home, 'projects'), { recursive: true, mode: 0o700 });
  writeAtomic(
    pointerPath(home, pointer.root),
    `${canonicalize({ type: POINTER_TYPE, ...pointer })}\n`,
    0o600,
  );
}

/**
 * The root's pointer; null when there is none; `{error}` when the file is there but is not a
 * pointer of this root (its path and what is wrong, for the start to record).
 */
export function readPointer(home: string, root: string): ProjectPointer | { error: string } | null {
  const path = pointerPath(home, root);
  const bytes = readRegularFileOrNull(path, POINTER_LIMIT);
  if (bytes === null) return null;
  try {
    const value = parseJson(bytes.toString('utf8'));
    if (!isJsonObject(value) || value.type !== POINTER_TYPE) throw new Error(`type is not ${POINTER_TYPE}`);
    for (const field of ['root', 'session', 'package', 'closed_at'])
      if (typeof value[field] !== 'string') throw new Error(`/${field} is not a string`);
    if (!isDigest(value.package_digest)) throw new Error('/package_digest is not a sha256: digest');
    if (value.root !== root) throw new Error(`/root names ${String(value.root)}, not ${root}`);
    return value as unknown as ProjectPointer;
  } catch (error) {
    return { error: `${path}: ${(error as Error).message}; remove it to start afresh` };
  }
}

/**
 * After a close sealed: the pointer to its package, whose digest the seal took as it wrote it. Best
 * effort — the package is sealed and the session closed whatever happens here; without a pointer
 * the next start looks for the project's own closed sessions.
 */
export function keepPointer(home: string, info: SessionInfo, packageDigest: string): void {
  if (info.package === undefined || info.closed_at === undefined) return;
  try {
    writePointer(home, {
      root: info.root,
      session: info.id,
      package: info.package,
      package_digest: packageDigest,
      closed_at: info.closed_at,
    });
  } catch {
    // A Tally home that cannot be written: the next start falls back on the project's sessions.
  }
}

/** The keys a start verifies the previous package with: those `tally verify` pins, and its own ship key. */
export function trustedHere(signer: ShipSigner): PublicKeyInput[] {
  const own = toPublicKey(signer.privateKey);
  try {
    return [own, ...pinnedKeys(signerHome(signer)).map((k) => k.publicKey)];
  } catch {
    return [own]; // a pinned key file that cannot be read: `tally verify` says which
  }
}
