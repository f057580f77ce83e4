/**
 * A package upload, verified on arrival by the CLI's own verifier while it streams in: the only
 * pinned key is the uploading ship's registered key, and the certificate the upload names (if any)
 * is cross-verified. Integrity checks must pass; policy checks (unauthorized calls, escalations,
 * validity window) are evidence about the session, kept with it and shown, not reasons to refuse.
 * Nothing is stored unless every required check passed and the body is the signed one.
 */
import type { IncomingMessage } from 'node:http';
import { type CheckResult, type VerifyResult, verifyPackageLines } from '../../evidence/package/verify.js';
import { packageLogEntry } from '../../hub-client/wire.js';
import type { Authenticated } from '../server/auth.js';
import { checkBodyDigest } from '../server/auth.js';
import { HubHttpError } from '../server/errors.js';
import type { PackageRow, Unlogged } from '../store/hub-store.js';
import { BodyCapture, bodyLines } from './body-lines.js';

/** Checks that describe what the session did, not whether the package is genuine. */
export const POLICY_CHECKS: ReadonlySet<string> = new Set([
  'within_validity_window',
  'certificate_at_now',
  'unauthorized_calls',
  'escalations',
  'never_called',
  // Informational: reported with the session, never a reason to refuse it.
  'unfinished_call',
  'log_repaired',
  // What the close could compare of the workspace: a fact about the session, like the policy's.
  'workspace_reconciled',
  // Whether the harness a run wired reported the session: a fact about the session too.
  'harness_reported',
  // A receipt that left rows out past its size bound: genuine, and shown as incomplete.
  'receipt_complete',
]);

/** The first check that failed and makes the package unacceptable (skipped checks are not causes). */
export function refusingCheck(checks: readonly CheckResult[]): CheckResult | undefined {
  return checks.find((c) => !c.ok && c.code !== 'skipped' && !POLICY_CHECKS.has(c.check));
}

export interface VerifiedUpload {
  row: Unlogged<PackageRow>;
  bytes: Buffer;
  result: VerifyResult;
}

export interface PackageUpload {
  session: string;
  auth: Authenticated;
  /** The certificate envelope the upload names, when it names one. */
  certificate?: { envelope: unknown; serial: string; agent: string };
  limit: number;
  now: Date;
  /** How far a record's time may be ahead of `now` (the uploader's clock may run ahead), ms. */
  clockSkewMs: number;
}

function epoch(text: string | undefined): number | null {
  const ms = text === undefined ? Number.NaN : Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

export async function verifyUpload(req: IncomingMessage, upload: PackageUpload): Promise<VerifiedUpload> {
  const capture = new BodyCapture();
  let result: VerifyResult;
  try {
    result = await verifyPackageLines(bodyLines(req, capture, upload.limit), {
      trusted: [upload.auth.publicKey],
      now: new Date(upload.now.getTime() + upload.clockSkewMs),
      ...(upload.certificate ? { certificate: upload.certificate.envelope } : {}),
    });
  } catch (error) {
    if (error instanceof HubHttpError) throw error;
    throw new HubHttpError('bad-request', `the upload could not be read: ${(error as Error).message}`);
  }
  const failed = refusingCheck(result.checks);
  if (failed) {
    throw new HubHttpError('verification-failed', `the package fails ${failed.check} (${failed.code})`, {
      check: failed.check,
      detail: { code: failed.code, detail: failed.detail },
    });
  }
  // Verification read the whole package; the rest of the body must be empty for the digest to hold.
  if (!capture.complete) for await (const chunk of req) capture.add(chunk as Buffer, upload.limit);
  if (!capture.complete) capture.finish();
  checkBodyDigest(upload.auth, capture.sha256!);
  if (result.session !== upload.session)
    throw new HubHttpError(
      'bad-request',
      `the package is session ${result.session}, uploaded as ${upload.session}`,
    );
  const bytes = capture.bytes();
  const entry = packageLogEntry(upload.auth.shipId, upload.session, bytes);
  const merkle = result.checks.find((c) => c.check === 'merkle_root')?.detail as {
    root: string;
    size: number;
  };
  const row: Unlogged<PackageRow> = {
    session: upload.session,
    ship_id: upload.auth.shipId,
    agent: upload.certificate?.agent ?? null,
    certificate: upload.certificate?.serial ?? null,
    digest: entry.digest,
    size: bytes.length,
    record_count: merkle.size,
    merkle_root: merkle.root,
    started_at: epoch(result.receipt?.session.start),
    ended_at: epoch(result.receipt?.session.end),
    received_at: upload.now.getTime(),
    checks: JSON.stringify(result.checks),
  };
  return { row, bytes, result };
}
