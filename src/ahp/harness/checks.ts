/**
 * The dispatcher's checks of what it is about to send, beyond the message validator itself: the
 * form of a validator verdict in a report, the issues that attachment publication will cure (so a
 * message can be checked before its bytes are uploaded), and the one rule across the caller's
 * event and advertisement no message check sees.
 */

import type { CanonicalEvent } from '../../core/event.js';
import { isJsonObject, pointerTokens } from '../../core/json.js';
import { type Issue, validateEvent, validateMessage } from '../messages/index.js';
import { isPendingAttachment } from './attachments.js';
import type { InterceptCapabilities } from './compose.js';
import { DispatchError } from './types.js';

/** A validator verdict in one line: the first issue's pointer, message and rule. */
export function describeIssues(issues: readonly Issue[]): string {
  const first = issues[0] as Issue;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `${first.pointer || '/'}: ${first.message} [${first.rule}]${more}`;
}

/** The value at an RFC 6901 pointer, or undefined. */
function atPointer(value: unknown, pointer: string): unknown {
  let at = value;
  for (const key of pointerTokens(pointer)) {
    at = isJsonObject(at) || Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined;
  }
  return at;
}

/**
 * What the validator finds in a message before its attachments are published, less what
 * publication cures (a pending attachment part has no `body` until it is uploaded): checked
 * before anything is uploaded, so an invalid message sends no bytes anywhere.
 */
export function prePublicationIssues(
  message: unknown,
  kind: 'intercept-request' | 'observe-notification',
): Issue[] {
  return validateMessage(message, kind).filter(
    (i) =>
      !(
        i.rule === 'required' &&
        i.pointer.endsWith('/body') &&
        isPendingAttachment(atPointer(message, i.pointer.slice(0, -'/body'.length)))
      ),
  );
}

/**
 * The event's issues less what publishing its attachments cures: a pending attachment part with
 * no `body` is fine when its bytes are among `attachments` (they are uploaded before sending).
 */
export function eventIssuesBeforePublication(event: unknown, attachments: ReadonlySet<string>): Issue[] {
  return validateEvent(event).filter((i) => {
    if (i.rule !== 'required' || !i.pointer.endsWith('/body')) return true;
    const part = atPointer(event, i.pointer.slice(0, -'/body'.length));
    return !(isPendingAttachment(part) && isJsonObject(part) && attachments.has(String(part.id)));
  });
}

/**
 * The one rule across the caller's event and advertisement that no message check sees: the
 * advertised continuation count is the event's own. (AHP-CAP-002, `deny` at `tool.before`, binds
 * Tally's own advertisements, which always include it; a caller's narrower one is sent, as the
 * official interop row `unadvertised-deny-rejected` does.)
 */
export function checkContinuations(
  event: CanonicalEvent,
  capabilities: InterceptCapabilities | undefined,
): void {
  const counted = capabilities?.flow?.continuationCount;
  if (
    typeof event.continuationCount === 'number' &&
    counted !== undefined &&
    counted !== event.continuationCount
  ) {
    throw new DispatchError(
      'bad-capabilities',
      `capabilities /flow/continuationCount: ${counted} is not the event's continuationCount ${event.continuationCount}`,
      { pointer: '/flow/continuationCount', rule: 'capabilities.continuation-count' },
    );
  }
}

/**
 * The issues an edit added: those of the edited event that the event before the edit did not
 * have (by pointer and rule). The event a host hands in may hold what only publication completes
 * (a pending attachment part has no `body` yet), so the edited event is judged against the
 * unedited one, not against a perfect one; a backend is blamed only for what its edits broke.
 */
export function issuesAdded(before: CanonicalEvent, after: CanonicalEvent): Issue[] {
  const added = validateEvent(after);
  if (added.length === 0) return added;
  const had = new Set(validateEvent(before).map((i) => `${i.rule} ${i.pointer}`));
  return added.filter((i) => !had.has(`${i.rule} ${i.pointer}`));
}
