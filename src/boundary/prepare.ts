/**
 * Preparing a captured event for judgement and the record: what a channel may leave out is filled
 * (id, time, source, session), secrets are redacted, and the result is validated as an AHP event.
 * Unknown event types and fields are kept (the receipt shows them); anything else invalid is
 * refused with the JSON pointer at fault — and the refusal itself is what gets recorded
 * (`tally.ingest.rejected`: a digest and the place, never the bytes), so nothing is dropped
 * silently.
 */
import { randomFillSync } from 'node:crypto';
import { validateEvent } from '../ahp/messages/index.js';
import type { Issue } from '../ahp/registration/types.js';
import { canonicalize } from '../core/canonical.js';
import { TallyError } from '../core/errors.js';
import type { CanonicalEvent } from '../core/event.js';
import { digest } from '../core/hash.js';
import { isJsonObject } from '../core/json.js';
import { isRfc3339DateTime } from '../core/time.js';
import { APPROVAL_EXTENSION, approvalEnvelope, recordableApproval } from '../evidence/approval.js';
import { isCloseOnlyType } from '../evidence/record/close-passes.js';
import { redactText, redactValue } from '../evidence/redact.js';

/** Tally's own event source URI (AHP `source`), for events Tally makes or fills in. */
export const TALLY_SOURCE_URI = 'urn:tally:cli';
/** The type of the record that stands for input that could not be accepted. */
export const REJECTED_EVENT_TYPE = 'tally.ingest.rejected';

export type BoundaryErrorCode = 'bad-event' | 'closed' | 'not-utf8' | 'close-source';

export class BoundaryError extends TallyError<BoundaryErrorCode> {}

/** Random bytes drawn 8 at a time from a pool refilled when spent (one system call per 64 ids). */
const idPool = Buffer.alloc(512);
let idAt = idPool.length;

export function eventId(): string {
  if (idAt === idPool.length) {
    randomFillSync(idPool);
    idAt = 0;
  }
  idAt += 8;
  return `evt_${idPool.toString('hex', idAt - 8, idAt)}`;
}

const KEPT_UNKNOWNS = new Set(['event.unknown-type', 'unknown-field']);

export interface PreparedEvent {
  event: CanonicalEvent;
  /** JSON pointers of the fields this AHP snapshot does not define (kept as received). */
  unknownFields: string[];
}

/** Fills, redacts and validates; throws BoundaryError('bad-event') naming every pointer at fault. */
export function prepareEvent(raw: unknown, sessionId: string, now: Date): PreparedEvent {
  if (!isJsonObject(raw)) {
    throw new BoundaryError('bad-event', '/: the event must be a JSON object (an AHP canonical event)', {
      issues: [{ pointer: '', rule: 'type', message: 'the event must be a JSON object' }],
    });
  }
  const filled: Record<string, unknown> = {
    id: eventId(),
    time: now.toISOString(),
    source: TALLY_SOURCE_URI,
    ...raw,
  };
  if (filled.session === undefined) filled.session = { id: sessionId };
  const event = redactValue(filled) as CanonicalEvent;
  // A signed approval is evidence, recorded as signed (its payload is checked for secrets).
  const approval = approvalEnvelope(filled);
  if (approval !== undefined)
    (event.extensions as Record<string, unknown>)[APPROVAL_EXTENSION] = recordableApproval(
      approval,
      redactValue,
    );
  const found = validateEvent(event);
  const issues = found.filter((i) => !KEPT_UNKNOWNS.has(i.rule));
  // A pass's summary tells the close it already ran: a channel's would stand in for the pass.
  if (isCloseOnlyType(event.type))
    issues.push({
      pointer: '/type',
      rule: 'close-only',
      message: `${String(event.type)} is written only by the close's own pass, never by a channel`,
    });
  if (!isRfc3339DateTime(String(event.time)) && !issues.some((i) => i.pointer === '/time')) {
    issues.push({ pointer: '/time', rule: 'format', message: 'time must be an RFC 3339 date-time' });
  }
  if (issues.length > 0) {
    // Validator messages can quote the input: they are redacted like the input would have been.
    const safe = issues.map((i) => ({ ...i, message: redactText(i.message) }));
    const list = safe.map((i) => `  ${i.pointer || '/'}: ${i.message} [${i.rule}]`).join('\n');
    throw new BoundaryError('bad-event', `the event is not a valid AHP event:\n${list}`, { issues: safe });
  }
  return { event, unknownFields: found.filter((i) => i.rule === 'unknown-field').map((i) => i.pointer) };
}

/** Where received input went wrong: a JSON pointer into it, or a byte offset into its bytes. */
export interface RejectedAt {
  pointer?: string;
  offset?: number;
}

export interface Rejection extends RejectedAt {
  /** The received bytes, or the parsed value (its canonical JSON is what is digested). */
  received: Uint8Array | unknown;
  reason: string;
  /** The channel that received it (hook, mcp, ahp, …). */
  source: string;
}

/** The event that stands in the record for input that was refused. */
export function rejectedEvent(rejection: Rejection, sessionId: string, now: Date): CanonicalEvent {
  const bytes =
    rejection.received instanceof Uint8Array
      ? rejection.received
      : Buffer.from(safeCanonical(rejection.received), 'utf8');
  return {
    id: eventId(),
    type: REJECTED_EVENT_TYPE,
    time: now.toISOString(),
    source: TALLY_SOURCE_URI,
    session: { id: sessionId },
    extensions: {
      'dev.tally.rejected': {
        digest: digest(bytes),
        bytes: bytes.length,
        channel: rejection.source,
        reason: redactText(rejection.reason).slice(0, 2000),
        ...(rejection.pointer !== undefined ? { pointer: rejection.pointer } : {}),
        ...(rejection.offset !== undefined ? { offset: rejection.offset } : {}),
      },
    },
  };
}

function safeCanonical(value: unknown): string {
  try {
    return canonicalize(value);
  } catch {
    return String(value);
  }
}

/** The first issue of a bad-event error, as the place it went wrong. */
export function firstIssue(error: BoundaryError): Issue | undefined {
  const issues = error.detail?.issues;
  return Array.isArray(issues) ? (issues[0] as Issue | undefined) : undefined;
}
