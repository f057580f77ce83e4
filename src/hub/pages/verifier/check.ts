/**
 * The browser verifier: the CLI's `verifyPackage` (the same ordered named checks, from the same
 * modules) after the WebCrypto pass, and on hub pages the hub checks — the package's log entry
 * rebuilt from its bytes, its inclusion proof and the checkpoint signed by the hub key; then the
 * heads the hub witnessed while the session ran, each signed and in the log, extended by the package.
 */
import { Buffer } from 'buffer';
import { keyId, type PublicKeyInput, rawPublicKey, shipId } from '../../../core/keys.js';
import { openNote, parseNoteVerifierKey } from '../../../core/signed-note.js';
import { parseCheckpoint } from '../../../core/tlog-tiles.js';
import { packageHeader } from '../../../evidence/package/grammar.js';
import { type VerifyResult, verifyPackage } from '../../../evidence/package/verify.js';
import { type FetchProof, proveEntry, type SignedTree } from '../../../hub-client/log-proof.js';
import { packageLogEntry } from '../../../hub-client/wire.js';
import {
  servedHeadsConsistency,
  type WitnessCheck,
  witnessFailed,
  witnessUnchecked,
} from '../../../hub-client/witness-check.js';
import { clearVerdicts } from './browser-crypto.js';
import { importPinned, primeEnvelopesIn, primeNote, primePackage } from './prime.js';

export interface BrowserVerifyOptions {
  /** Raw 32-byte Ed25519 public keys to pin. */
  keys: readonly Uint8Array[];
  now: Date;
}

export async function verifyInBrowser(
  bytes: Uint8Array,
  options: BrowserVerifyOptions,
): Promise<VerifyResult> {
  clearVerdicts();
  const pinned = await importPinned(options.keys);
  await primePackage(bytes, pinned);
  return verifyPackage(bytes, { trusted: options.keys as PublicKeyInput[], now: options.now, workers: 0 });
}

/** The keys a package's header lists (for "self-consistent": signed by the keys it names). */
export function headerKeys(bytes: Uint8Array): { session: string; keys: { id: string; raw: Uint8Array }[] } {
  const header = packageHeader(bytes);
  return {
    session: header.session,
    keys: header.keys.map((k) => {
      const raw = Buffer.from(k.public_key, 'base64');
      return { id: keyId(raw), raw };
    }),
  };
}

export interface InclusionResult {
  check: 'hub_inclusion';
  ok: boolean;
  code: 'ok' | 'bad-package' | 'untrusted-checkpoint' | 'not-included' | 'unreachable';
  detail: Record<string, unknown>;
}

/** What both hub checks start from: the hub's signed checkpoint and its proofs. */
export interface HubInput {
  /** The checkpoint note as served. */
  checkpoint: string;
  /** The hub's verifier key, `<origin>+<id>+<base64 key>`. */
  verifierKey: string;
  proof: FetchProof;
}

export interface InclusionInput extends HubInput {
  shipId: string;
  logIndex: number;
}

/** Opens the checkpoint with the hub's verifier key, its signature checked by WebCrypto first. */
async function openCheckpointInBrowser(note: string, verifierKey: string): Promise<SignedTree> {
  const verifier = parseNoteVerifierKey(verifierKey);
  const [pinned] = await importPinned([rawPublicKey(verifier.publicKey)]);
  await primeNote(note, pinned!);
  const checkpoint = parseCheckpoint(openNote(note, [verifier]).text);
  if (checkpoint.origin !== verifier.name) throw new Error(`the checkpoint is of ${checkpoint.origin}`);
  return checkpoint;
}

/** hub_inclusion in the page: the same rule as `tally verify --hub`. */
export async function inclusionInBrowser(bytes: Uint8Array, input: InclusionInput): Promise<InclusionResult> {
  const fail = (code: InclusionResult['code'], message: string, detail: Record<string, unknown> = {}) =>
    ({ check: 'hub_inclusion', ok: false, code, detail: { message, ...detail } }) as InclusionResult;
  let session: string;
  let signerShips: string[];
  try {
    const header = headerKeys(bytes);
    session = header.session;
    signerShips = header.keys.map((k) => shipId(k.raw));
  } catch (error) {
    return fail('bad-package', (error as Error).message);
  }
  let tree: SignedTree;
  try {
    tree = await openCheckpointInBrowser(input.checkpoint, input.verifierKey);
  } catch (error) {
    return fail('untrusted-checkpoint', (error as Error).message);
  }
  if (!signerShips.includes(input.shipId))
    return fail('not-included', `the hub lists ${session} under ${input.shipId}, which did not sign it`);
  const entry = packageLogEntry(input.shipId, session, bytes);
  let included: boolean;
  try {
    included = await proveEntry(entry, input.logIndex, tree, input.proof);
  } catch (error) {
    return fail('unreachable', (error as Error).message);
  }
  if (!included)
    return fail(
      'not-included',
      `these bytes are not entry ${input.logIndex} of the log at size ${tree.size}`,
      {
        digest: entry.digest,
      },
    );
  return {
    check: 'hub_inclusion',
    ok: true,
    code: 'ok',
    detail: { log_index: input.logIndex, tree_size: tree.size },
  };
}

export interface WitnessInput extends HubInput {
  /** The hub's answer to `GET /v1/sessions/{session}/heads`. */
  heads: unknown;
  /** Raw 32-byte Ed25519 keys the package is verified with: each head must be signed by one. */
  keys: readonly Uint8Array[];
}

/**
 * witness_consistent in the page: the CLI's rule (hub-client/witness-check.ts), with the heads'
 * signatures checked by WebCrypto before the shared code asks for them.
 */
export async function witnessInBrowser(bytes: Uint8Array, input: WitnessInput): Promise<WitnessCheck> {
  let session: string;
  try {
    session = headerKeys(bytes).session;
  } catch (error) {
    return witnessFailed((error as Error).message);
  }
  let tree: SignedTree;
  try {
    tree = await openCheckpointInBrowser(input.checkpoint, input.verifierKey);
    await primeEnvelopesIn(input.heads, await importPinned(input.keys));
  } catch (error) {
    return witnessUnchecked(error);
  }
  return servedHeadsConsistency(bytes, input.heads, {
    session,
    trusted: input.keys as PublicKeyInput[],
    tree,
    fetchProof: input.proof,
  });
}
