/**
 * witness_consistent: the package extends every chain head a hub witnessed while the session ran.
 * A head counts only when it is signed by a pinned key, is of this session and is proven in the
 * hub's signed log; then the record at its `seq` must have the witnessed digest. `tally verify
 * --hub` and the receipt page's browser verifier both run this module; neither reaches the network
 * through it (each passes the hub's answer and its own way of fetching proofs).
 */
import { canonicalize, parseJson } from '../core/canonical.js';
import { verifyEnvelope } from '../core/dsse.js';
import { digest } from '../core/hash.js';
import type { PublicKeyInput } from '../core/keys.js';
import { type FetchProof, proveEntry, type SignedTree } from './log-proof.js';
import { type ChainHeadStatement, HEAD_PAYLOAD_TYPE, type LogEntry } from './wire.js';

export interface WitnessedHead {
  seq: number;
  /** `sha256:` of the record at `seq`. */
  digest: string;
}

export interface WitnessCheck {
  check: 'witness_consistent';
  ok: boolean;
  code: 'ok' | 'info' | 'witness-mismatch' | 'witness-beyond-end' | 'bad-package';
  detail: Record<string, unknown>;
}

/** The check failed before any head could be compared (the package, the hub's answer or a head). */
export function witnessFailed(message: string): WitnessCheck {
  return { check: 'witness_consistent', ok: false, code: 'bad-package', detail: { message } };
}

/** The heads could not be read or admitted: what the hub said, or what it failed to say. */
export function witnessUnchecked(error: unknown): WitnessCheck {
  return witnessFailed(`the witnessed heads could not be checked: ${(error as Error).message}`);
}

/**
 * Does the package extend every witnessed head — is the record at each head's `seq` the one whose
 * digest was witnessed? Record digests are SHA-256 of each record's canonical payload, as the
 * chain's `prev`. The package's own integrity is the verifier's business; this reads its lines.
 */
export function witnessConsistency(packageBytes: Uint8Array, heads: readonly WitnessedHead[]): WitnessCheck {
  const lines = Buffer.from(packageBytes).toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const records = lines.slice(1, -1);
  if (heads.length === 0)
    return {
      check: 'witness_consistent',
      ok: true,
      code: 'info',
      detail: { heads: 0, message: 'no head of this session was witnessed' },
    };
  for (const head of [...heads].sort((a, b) => a.seq - b.seq)) {
    const line = records[head.seq];
    if (line === undefined)
      return {
        check: 'witness_consistent',
        ok: false,
        code: 'witness-beyond-end',
        detail: {
          seq: head.seq,
          records: records.length,
          message: `a head at seq ${head.seq} was witnessed, but the package ends at ${records.length - 1}`,
        },
      };
    let actual: string;
    try {
      const envelope = parseJson(line) as { payload: string };
      actual = digest(Buffer.from(envelope.payload, 'base64'));
    } catch (error) {
      return {
        check: 'witness_consistent',
        ok: false,
        code: 'bad-package',
        detail: { seq: head.seq, message: (error as Error).message },
      };
    }
    if (actual !== head.digest)
      return {
        check: 'witness_consistent',
        ok: false,
        code: 'witness-mismatch',
        detail: {
          seq: head.seq,
          witnessed: head.digest,
          package: actual,
          message: `record ${head.seq} is not the one witnessed`,
        },
      };
  }
  return {
    check: 'witness_consistent',
    ok: true,
    code: 'ok',
    detail: { heads: heads.length, last: Math.max(...heads.map((h) => h.seq)) },
  };
}

/** One head of `GET /v1/sessions/{session}/heads`, as far as the check reads it. */
export interface ServedHead {
  seq: number;
  log_index: number;
  envelope: unknown;
}

/** The heads of the hub's answer; anything else in it is ignored, a malformed head refused. */
export function servedHeads(answer: unknown): ServedHead[] {
  const heads = (answer as { heads?: unknown } | null)?.heads;
  if (!Array.isArray(heads)) throw new Error('the answer lists no heads');
  return heads.map((h: unknown, i) => {
    const head = h as Partial<ServedHead> | null;
    if (
      typeof head !== 'object' ||
      head === null ||
      !Number.isSafeInteger(head.seq) ||
      !Number.isSafeInteger(head.log_index) ||
      typeof head.envelope !== 'object' ||
      head.envelope === null
    )
      throw new Error(`head ${i} of the answer is not {seq, log_index, envelope}`);
    return { seq: head.seq!, log_index: head.log_index!, envelope: head.envelope };
  });
}

export interface ServedHeadsOptions {
  /** The package's session id. */
  session: string;
  /** The keys the package is verified with: every head must be signed by one of them. */
  trusted: readonly PublicKeyInput[];
  /** The hub's checkpoint, already opened with the pinned hub key. */
  tree: SignedTree;
  fetchProof: FetchProof;
}

/**
 * witness_consistent over a hub's answer to `GET /v1/sessions/{session}/heads`: every head it lists
 * is admitted (signed by a trusted key, of this session, in the signed log), then the package must
 * extend them all.
 */
export async function servedHeadsConsistency(
  packageBytes: Uint8Array,
  answer: unknown,
  options: ServedHeadsOptions,
): Promise<WitnessCheck> {
  const heads: WitnessedHead[] = [];
  try {
    for (const served of servedHeads(answer)) {
      const verified = verifyEnvelope(served.envelope, options.trusted, { strict: true });
      if (verified.payloadType !== HEAD_PAYLOAD_TYPE)
        return witnessFailed(`head ${served.seq} has payloadType ${verified.payloadType}`);
      const head = parseJson(verified.payload.toString('utf8')) as ChainHeadStatement;
      if (head.session !== options.session)
        return witnessFailed(`head ${served.seq} is for session ${head.session}`);
      // The key id and the ship id are the same fingerprint of the signing key.
      const entry: LogEntry = {
        kind: 'head',
        ship_id: `ship_${verified.keyIds[0]!.slice(4)}`,
        id: options.session,
        digest: digest(canonicalize(served.envelope)),
      };
      if (!(await proveEntry(entry, served.log_index, options.tree, options.fetchProof)))
        return witnessFailed(`witnessed head ${head.seq} is not in the signed log`);
      heads.push({ seq: head.seq, digest: head.digest });
    }
  } catch (error) {
    return witnessUnchecked(error);
  }
  return witnessConsistency(packageBytes, heads);
}
