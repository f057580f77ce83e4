/**
 * One record ↔ one log line. A line is the canonical JSON of a DSSE envelope whose payload is the
 * canonical JSON of the EventRecord, followed by "\n". The record digest (what `prev` points to and
 * what the Merkle tree is built over) is SHA-256 of those payload bytes.
 */

import { type KeyObject, sign } from 'node:crypto';
import { canonicalBytes, canonicalize } from '../../core/canonical.js';
import type { Envelope } from '../../core/dsse.js';
import { TallyError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { isJsonObject, jsonErrorMessage } from '../../core/json.js';
import { type EventRecord, RECORD_FLAGS, RECORD_PAYLOAD_TYPE } from './record.js';

export type RecordCheck = 'parse' | 'signature' | 'schema' | 'sequence' | 'chain' | 'session';

export class RecordError extends TallyError<RecordCheck> {}

/**
 * The longest line a log or package may hold: 64 MiB. The writer refuses to append a record whose
 * line would be longer, and readers refuse such a line instead of buffering it, so a file with no
 * newline cannot make a reader hold it whole.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface Signer {
  privateKey: KeyObject;
  keyId: string;
}

export interface EncodedRecord {
  line: Buffer;
  /** SHA-256 of the canonical payload. */
  digest: Buffer;
}

/** DSSE's PAE of a record payload up to its length: `DSSEv1 <len(type)> <type> `. */
const RECORD_PAE_HEAD = `DSSEv1 ${Buffer.byteLength(RECORD_PAYLOAD_TYPE)} ${RECORD_PAYLOAD_TYPE} `;

/**
 * The record's signed line: what `signEnvelope` and `canonicalize` of the envelope make, spelled
 * out, since this is the append hot path — the PAE built in one piece, the envelope's members
 * already in code-unit order, and base64, the key id and the payload type needing no escaping. The
 * codec tests hold it to `signEnvelope` and `canonicalize`, byte for byte.
 */
export function encodeRecord(record: EventRecord, signer: Signer): EncodedRecord {
  const payload = canonicalBytes(record);
  const head = `${RECORD_PAE_HEAD}${payload.length} `;
  const message = Buffer.allocUnsafe(head.length + payload.length);
  message.write(head, 0, 'latin1');
  payload.copy(message, head.length);
  const sig = sign(null, message, signer.privateKey).toString('base64');
  const line = `{"payload":"${payload.toString('base64')}","payloadType":"${RECORD_PAYLOAD_TYPE}","signatures":[{"keyid":${JSON.stringify(signer.keyId)},"sig":"${sig}"}]}\n`;
  return { line: Buffer.from(line, 'utf8'), digest: sha256(payload) };
}

export function digestRef(digest: Uint8Array): string {
  return `sha256:${Buffer.from(digest).toString('hex')}`;
}

/** Parses a line into its envelope; structure only, no trust. */
export function parseEnvelopeLine(line: Buffer | string): Envelope {
  let value: unknown;
  const text = typeof line === 'string' ? line : line.toString('utf8');
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecordError('parse', `line is not JSON: ${jsonErrorMessage(error)}`);
  }
  const env = value as Partial<Envelope>;
  if (
    typeof env !== 'object' ||
    env === null ||
    typeof env.payload !== 'string' ||
    !Array.isArray(env.signatures)
  ) {
    throw new RecordError('parse', 'line is not a DSSE envelope');
  }
  if (env.payloadType !== RECORD_PAYLOAD_TYPE) {
    throw new RecordError(
      'parse',
      `payloadType is ${JSON.stringify(env.payloadType)}, expected ${RECORD_PAYLOAD_TYPE}`,
    );
  }
  // Lines are written as canonical JSON; any other spelling of the same envelope is not ours.
  if (canonicalize(env) !== text) throw new RecordError('parse', 'line is not in canonical JSON form');
  return env as Envelope;
}

/**
 * Decodes verified payload bytes into a record, insisting they are the canonical form (which also
 * rules out duplicate keys) and that the fields have their types.
 */
export function decodeRecordPayload(payload: Buffer): EventRecord {
  let value: unknown;
  const text = payload.toString('utf8');
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecordError('parse', `payload is not JSON: ${jsonErrorMessage(error)}`);
  }
  if (canonicalize(value) !== text) throw new RecordError('schema', 'payload is not in canonical form');
  const r = value as Partial<EventRecord>;
  const fail = (field: string, want: string): never => {
    throw new RecordError('schema', `record field ${field} must be ${want}`, { field });
  };
  if (typeof r !== 'object' || r === null || Array.isArray(r)) fail('(root)', 'an object');
  if (r.v !== 1 && r.v !== 2) fail('v', '1 or 2');
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 0) fail('seq', 'a non-negative integer');
  if (typeof r.time !== 'string') fail('time', 'a string');
  if (typeof r.session !== 'string' || r.session.length === 0) fail('session', 'a non-empty string');
  if (typeof r.source !== 'string' || r.source.length === 0) fail('source', 'a non-empty string');
  if (r.prev !== null && !(typeof r.prev === 'string' && /^sha256:[0-9a-f]{64}$/.test(r.prev))) {
    fail('prev', 'null or "sha256:<64 hex>"');
  }
  const e = r.event as Record<string, unknown> | undefined;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) fail('event', 'an object');
  if (typeof e?.type !== 'string' || typeof e.id !== 'string')
    fail('event', 'an object with string id and type');
  checkVersionMembers(r as EventRecord, fail);
  return r as EventRecord;
}

const V2_MEMBERS = ['answers', 'binding', 'resolved', 'flags'] as const;

/** v1 records carry none of the v2 members; v2 members have their documented shapes. */
function checkVersionMembers(r: EventRecord, fail: (field: string, want: string) => never): void {
  if (r.v === 1) {
    for (const member of V2_MEMBERS) if (member in r) fail(member, 'absent from a v1 record');
    return;
  }
  if (r.answers !== undefined) {
    if (!Array.isArray(r.answers)) fail('answers', 'an array');
    r.answers.forEach((a, i) => {
      if (!isJsonObject(a) || typeof a.backend !== 'string' || typeof a.decision !== 'string')
        fail(`answers/${i}`, 'an object with string backend and decision');
      if (!Number.isSafeInteger(a.latency_ms) || a.latency_ms < 0)
        fail(`answers/${i}/latency_ms`, 'a non-negative integer');
    });
  }
  if (r.binding !== undefined && (!isJsonObject(r.binding) || r.event.type !== 'session.start'))
    fail('binding', 'an object, on a session.start record only');
  if (r.resolved !== undefined && !Array.isArray(r.resolved)) fail('resolved', 'an array');
  if (r.flags !== undefined) {
    const flags: unknown = r.flags;
    const known = new Set<string>(RECORD_FLAGS);
    if (
      !Array.isArray(flags) ||
      flags.some((f, i) => typeof f !== 'string' || !known.has(f) || (i > 0 && flags[i - 1] >= f))
    )
      fail('flags', `a sorted list of distinct flags from ${RECORD_FLAGS.join(', ')}`);
  }
}
