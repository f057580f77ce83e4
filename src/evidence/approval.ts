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
import { digest } from '../core/hash.js';
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
  /**
   * The digest (`sha256:<hex>` of the canonical JSON) of the tool input the person saw: the approval
   * covers that input only. Absent in approvals that name the call alone.
   */
  input?: string;
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
    typeof value.time !== 'string' ||
    (value.input !== undefined && typeof value.input !== 'string')
  )
    throw new ApprovalError('invalid', 'the approval is not {type, session, call, decision, approver, time}');
  if (!verified.keyIds.includes(value.approver))
    throw new ApprovalError('signature', 'the approval is not signed by the approver it names');
  return value as unknown as Approval;
}

/** The digest an approval binds: SHA-256 of the canonical JSON of the tool input (`null` when none). */
export function approvedInputDigest(input: unknown): string {
  return digest(canonicalBytes(input === undefined ? null : input));
}

/**
 * What the record keeps of an approval envelope. A well-formed one (one Ed25519 signature over an
 * approval document) that redaction would leave unchanged is kept byte for byte: redacting its
 * signature would destroy the evidence it is. Any other is kept with its payload decoded, redacted
 * and encoded again (so a secret in it is not recorded, even base64-encoded) — and no longer verifies.
 */
export function recordableApproval(value: unknown, redact: (v: unknown) => unknown): unknown {
  if (!isJsonObject(value) || typeof value.payload !== 'string') return redact(value);
  let document: unknown;
  try {
    document = parseJson(Buffer.from(value.payload, 'base64'));
  } catch {
    return redact({ ...value, payload: '[UNREADABLE]' });
  }
  const clean = canonicalBytes(redact(document)).equals(canonicalBytes(document));
  const { signatures } = value;
  const [signature] = Array.isArray(signatures) ? signatures : [];
  if (
    clean &&
    isJsonObject(document) &&
    document.type === APPROVAL_TYPE &&
    value.payloadType === APPROVAL_PAYLOAD_TYPE &&
    Object.keys(value).length === 3 &&
    Array.isArray(signatures) &&
    signatures.length === 1 &&
    isJsonObject(signature) &&
    Object.keys(signature).length === 2 &&
    typeof signature.keyid === 'string' &&
    redact(signature.keyid) === signature.keyid &&
    typeof signature.sig === 'string' &&
    /^[A-Za-z0-9+/]{86}==$/.test(signature.sig)
  )
    return value;
  const redacted = redact({ ...value, payload: '' }) as Record<string, unknown>;
  return { ...redacted, payload: canonicalBytes(redact(document)).toString('base64') };
}

/** The approval envelope a `tally.approval` event carries, if it is one. */
export function approvalEnvelope(event: Record<string, unknown>): unknown {
  if (event.type !== APPROVAL_EVENT_TYPE || !isJsonObject(event.extensions)) return undefined;
  return event.extensions[APPROVAL_EXTENSION];
}
