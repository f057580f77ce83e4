/**
 * Approvals of escalated calls that count as evidence. An approval is evidence only from a channel
 * the agent cannot write: a person's decision signed with the approver key (kept encrypted, used
 * only at a terminal: `tally approve`), recorded in the session as a `tally.approval` event carrying
 * the signed envelope. A `tool.permission.resolved` event the agent's own hook channel sends is
 * recorded, but proves nothing about who approved. (The other kind, the harness's report that a
 * call ran after it asked — `approved_in_harness` — is read from the records by cross-verification
 * and is only ever what the harness asserts.) Format: docs/formats.md#approval.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalBytes, parseJson } from '../core/canonical.js';
import { type Envelope, signEnvelope, type TrustedKeys, verifyEnvelope } from '../core/dsse.js';
import { TallyError } from '../core/errors.js';
import { isJsonObject } from '../core/json.js';
import { keyId, type PublicKeyInput } from '../core/keys.js';

export const APPROVAL_TYPE = 'tally/approval/v1';
export const APPROVAL_PAYLOAD_TYPE = 'application/vnd.tally.approval+json';
/** The event type of the record that carries an approval, and the extension that holds it. */
export const APPROVAL_EVENT_TYPE = 'tally.approval';
export const APPROVAL_EXTENSION = 'dev.tally.approval';

export interface Approval {
  type: typeof APPROVAL_TYPE;
  session: string;
  /** The call id of the escalated tool call. */
  call: string;
  decision: 'allow' | 'deny';
  /** The approver key that signed. */
  approver: string;
  time: string;
  reason?: string;
}

export class ApprovalError extends TallyError<'invalid' | 'signature'> {}

export function signApproval(
  approval: Omit<Approval, 'type' | 'approver'>,
  approverKey: KeyObject,
): { approval: Approval; envelope: Envelope } {
  const full: Approval = { type: APPROVAL_TYPE, ...approval, approver: keyId(approverKey) };
  const envelope = signEnvelope(canonicalBytes(full), APPROVAL_PAYLOAD_TYPE, {
    privateKey: approverKey,
    keyid: full.approver,
  });
  return { approval: full, envelope };
}

/** The approval an envelope carries, when a pinned approver key signed it; throws otherwise. */
export function verifyApproval(
  envelope: unknown,
  approvers: TrustedKeys | readonly PublicKeyInput[],
): Approval {
  let verified: ReturnType<typeof verifyEnvelope>;
  try {
    verified = verifyEnvelope(envelope, approvers, { strict: true });
  } catch (error) {
    throw new ApprovalError('signature', `approval signature: ${(error as Error).message}`);
  }
  if (verified.payloadType !== APPROVAL_PAYLOAD_TYPE)
    throw new ApprovalError('invalid', `payloadType is ${verified.payloadType}`);
  const value = parseJson(verified.payload);
  if (
    !isJsonObject(value) ||
    value.type !== APPROVAL_TYPE ||
    typeof value.session !== 'string' ||
    typeof value.call !== 'string' ||
    (value.decision !== 'allow' && value.decision !== 'deny') ||
    typeof value.approver !== 'string' ||
    typeof value.time !== 'string'
  )
    throw new ApprovalError('invalid', 'the approval is not {type, session, call, decision, approver, time}');
  if (!verified.keyIds.includes(value.approver))
    throw new ApprovalError('signature', 'the approval is not signed by the approver it names');
  return value as unknown as Approval;
}

/** The approval envelope a `tally.approval` event carries, if it is one. */
export function approvalEnvelope(event: Record<string, unknown>): unknown {
  if (event.type !== APPROVAL_EVENT_TYPE || !isJsonObject(event.extensions)) return undefined;
  return event.extensions[APPROVAL_EXTENSION];
}
