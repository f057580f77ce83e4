/**
 * A witnessed chain head: a DSSE envelope (payloadType application/vnd.tally.head+json) signed by
 * the ship key whose request carries it, with the canonical payload
 * {type: "tally/chain-head/v1", session, seq, digest, time}.
 */
import { canonicalize, parseJson } from '../../core/canonical.js';
import { verifyEnvelope } from '../../core/dsse.js';
import { digest, isDigest } from '../../core/hash.js';
import { isRfc3339DateTime } from '../../core/time.js';
import { CHAIN_HEAD_TYPE, type ChainHeadStatement, HEAD_PAYLOAD_TYPE } from '../../hub-client/wire.js';
import type { Authenticated } from '../server/auth.js';
import { HubHttpError } from '../server/errors.js';
import type { HeadRow, Unlogged } from '../store/hub-store.js';

function refuse(message: string): never {
  throw new HubHttpError('verification-failed', message, { check: 'head' });
}

export function verifyHead(
  envelope: unknown,
  auth: Authenticated,
  session: string,
  now: Date,
): Unlogged<HeadRow> {
  let payload: Buffer;
  try {
    const verified = verifyEnvelope(envelope, [auth.publicKey], { strict: true });
    if (verified.payloadType !== HEAD_PAYLOAD_TYPE) refuse(`payloadType must be ${HEAD_PAYLOAD_TYPE}`);
    payload = verified.payload;
  } catch (error) {
    if (error instanceof HubHttpError) throw error;
    refuse(`the head is not signed by the uploading ship's key: ${(error as Error).message}`);
  }
  let head: ChainHeadStatement;
  try {
    head = parseJson(payload.toString('utf8')) as ChainHeadStatement;
  } catch (error) {
    refuse(`the head payload is not JSON: ${(error as Error).message}`);
  }
  if (canonicalize(head) !== payload.toString('utf8')) refuse('the head payload is not canonical JSON');
  const keys = Object.keys(head).sort().join(',');
  if (keys !== 'digest,seq,session,time,type' || head.type !== CHAIN_HEAD_TYPE)
    refuse(`the head payload must be exactly {type: "${CHAIN_HEAD_TYPE}", session, seq, digest, time}`);
  if (head.session !== session) refuse(`the head is for session ${String(head.session)}, sent to ${session}`);
  if (!Number.isSafeInteger(head.seq) || head.seq < 0) refuse('seq must be a non-negative integer');
  if (!isDigest(head.digest)) refuse('digest must be sha256:<64 hex>');
  if (typeof head.time !== 'string' || !isRfc3339DateTime(head.time) || !head.time.endsWith('Z'))
    refuse('time must be an RFC 3339 UTC date-time');
  const text = canonicalize(envelope);
  return {
    session,
    seq: head.seq,
    record_digest: head.digest,
    digest: digest(text),
    ship_id: auth.shipId,
    time: Date.parse(head.time),
    envelope: text,
    received_at: now.getTime(),
  };
}
