/**
 * The browser verifier: the CLI's `verifyPackage` (the same ordered named checks, from the same
 * modules) after the WebCrypto pass, and on hub pages the hub checks — the package's log entry
 * rebuilt from its bytes, its inclusion proof and the checkpoint signed by the hub key.
 */
import { Buffer } from 'buffer';
import { keyId, type PublicKeyInput, rawPublicKey, shipId } from '../../../core/keys.js';
import { verifyInclusion } from '../../../core/merkle.js';
import { openNote, parseNoteVerifierKey } from '../../../core/signed-note.js';
import { parseCheckpoint } from '../../../core/tlog-tiles.js';
import { parseHeader } from '../../../evidence/package/grammar.js';
import { type VerifyResult, verifyPackage } from '../../../evidence/package/verify.js';
import { logEntryBytes, packageLogEntry } from '../../../hub-client/wire.js';
import { clearVerdicts } from './browser-crypto.js';
import { importPinned, primeNote, primePackage } from './prime.js';

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
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const nl = buf.indexOf(0x0a);
  const header = parseHeader(buf.subarray(0, nl < 0 ? buf.length : nl));
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

export interface InclusionInput {
  /** The checkpoint note as served. */
  checkpoint: string;
  /** The hub's verifier key, `<origin>+<id>+<base64 key>`. */
  verifierKey: string;
  shipId: string;
  logIndex: number;
  /** Fetches the inclusion proof for (index, size): base64 hashes. */
  proof: (index: number, size: number) => Promise<string[]>;
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
  let size: number;
  let root: Uint8Array;
  try {
    const verifier = parseNoteVerifierKey(input.verifierKey);
    const [pinned] = await importPinned([rawPublicKey(verifier.publicKey)]);
    await primeNote(input.checkpoint, pinned!);
    const opened = openNote(input.checkpoint, [verifier]);
    const checkpoint = parseCheckpoint(opened.text);
    if (checkpoint.origin !== verifier.name) throw new Error(`the checkpoint is of ${checkpoint.origin}`);
    size = checkpoint.size;
    root = checkpoint.root;
  } catch (error) {
    return fail('untrusted-checkpoint', (error as Error).message);
  }
  if (!signerShips.includes(input.shipId))
    return fail('not-included', `the hub lists ${session} under ${input.shipId}, which did not sign it`);
  const entry = packageLogEntry(input.shipId, session, bytes);
  if (input.logIndex >= size)
    return fail('not-included', `entry ${input.logIndex} is beyond the checkpoint's size ${size}`);
  let proof: Buffer[];
  try {
    proof = (await input.proof(input.logIndex, size)).map((p) => Buffer.from(p, 'base64'));
  } catch (error) {
    return fail('unreachable', (error as Error).message);
  }
  if (!verifyInclusion(logEntryBytes(entry), input.logIndex, size, proof, root))
    return fail('not-included', `these bytes are not entry ${input.logIndex} of the log at size ${size}`, {
      digest: entry.digest,
    });
  return {
    check: 'hub_inclusion',
    ok: true,
    code: 'ok',
    detail: { log_index: input.logIndex, tree_size: size },
  };
}
