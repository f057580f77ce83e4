/**
 * Cross-verification checks (with a certificate): the certificate is signed by a pinned key, was
 * issued to the ship that signed the receipt, covered the session's window, its state at `now`,
 * and whether the session's calls stayed inside it.
 */
import type { TrustedKeys } from '../../core/dsse.js';
import { type PublicKeyInput, shipId, toPublicKey } from '../../core/keys.js';
import { type AgentCertificate, certificateDigest, verifyCertificate } from '../certificate.js';
import { certificateStateAt } from '../policy/judge.js';
import type { Checks } from './checks.js';
import { type CrossVerification, crossVerify } from './cross-verify.js';
import type { CrossRecords } from './verify-fold.js';

export function crossChecks(
  checks: Checks,
  options: { certificate?: unknown; now: Date; approvers?: readonly PublicKeyInput[] },
  records: CrossRecords,
  trusted: TrustedKeys,
  receiptSigners: string[],
): CrossVerification | null {
  const { now } = options;
  let certificate: AgentCertificate;
  try {
    certificate = verifyCertificate(options.certificate, trusted).certificate;
    checks.pass('certificate_signature', { serial: certificate.serial, agent: certificate.agent.name });
  } catch (error) {
    checks.fail('certificate_signature', 'bad-certificate', (error as Error).message);
    return null;
  }
  checkBound(checks, options.certificate, records);
  // The receipt signer's identity must be the one the certificate was issued for.
  const signerShips = receiptSigners.map((id) => shipId(toPublicKey(trusted.byId.get(id)!)));
  if (signerShips.includes(certificate.ship_id)) {
    checks.pass('ship_id_match', { ship_id: certificate.ship_id });
  } else {
    checks.fail('ship_id_match', 'ship-mismatch', { certificate: certificate.ship_id, session: signerShips });
  }
  const window = records.window();
  const validity = { valid_from: certificate.valid_from, valid_until: certificate.valid_until };
  const inside =
    Date.parse(window.start) >= Date.parse(certificate.valid_from) &&
    Date.parse(window.end) <= Date.parse(certificate.valid_until);
  const detail = { session: window, certificate: validity };
  if (inside) checks.pass('within_validity_window', detail);
  else checks.fail('within_validity_window', 'outside-window', detail);
  // Informational: a session is often reviewed after its certificate expired; the window check
  // above is what binds the session to the certificate.
  const state = certificateStateAt(certificate, now);
  checks.pass(
    'certificate_at_now',
    { state, now: now.toISOString(), ...validity },
    state === 'valid' ? 'ok' : 'info',
  );

  const cross = crossVerify(
    certificate,
    records.records,
    options.approvers ? { approvers: options.approvers } : {},
  );
  const executed = cross.unauthorized.filter((c) => !c.blocked);
  const list = cross.unauthorized.map((c) => ({
    seq: c.seq,
    tool: c.tool,
    verdict: c.verdict,
    ...(c.pattern ? { pattern: c.pattern } : {}),
    ...(c.inputChanged ? { input_changed: true } : {}),
    blocked: c.blocked,
  }));
  if (executed.length === 0)
    checks.pass('unauthorized_calls', {
      count: cross.unauthorized.length,
      blocked: cross.unauthorized.length,
      calls: list,
    });
  else
    checks.fail('unauthorized_calls', 'unauthorized', {
      count: cross.unauthorized.length,
      executed: executed.length,
      calls: list,
    });
  const unapproved = cross.escalations.filter((c) => !c.approved && !c.blocked);
  const escalations = cross.escalations.map((c) => ({
    seq: c.seq,
    tool: c.tool,
    pattern: c.pattern,
    ...(c.inputChanged ? { input_changed: true } : {}),
    approved: c.approved,
    // Who approved, and how much that proves: signed by an approver key, or asserted by the harness.
    ...(c.approval ? { approval: c.approval, approved_by: c.approvedBy } : {}),
    blocked: c.blocked,
  }));
  if (unapproved.length === 0)
    checks.pass('escalations', { count: cross.escalations.length, calls: escalations });
  else
    checks.fail('escalations', 'unapproved-escalation', {
      count: cross.escalations.length,
      unapproved: unapproved.length,
      calls: escalations,
    });
  checks.pass('never_called', { patterns: cross.neverCalled }, 'info');
  return cross;
}

/**
 * The certificate given is the one the session ran under: its digest is the one the signed
 * `session.start` record bound. A session that bound none (no certificate at start, or a v1 log)
 * is reported, not failed: its calls are still judged against the certificate given.
 */
function checkBound(checks: Checks, envelope: unknown, records: CrossRecords): void {
  const given = certificateDigest(envelope);
  const start = records.records.find((r) => r.seq === 0 && r.event.type === 'session.start');
  const bound = start?.binding?.certificate;
  if (bound === undefined) {
    checks.pass(
      'certificate_bound',
      { given, bound: null, message: 'the session did not bind a certificate at its start' },
      'info',
    );
    return;
  }
  if (bound.digest === given) checks.pass('certificate_bound', { digest: given, serial: bound.serial });
  else
    checks.fail('certificate_bound', 'other-certificate', {
      given,
      bound: bound.digest,
      bound_serial: bound.serial,
      bound_agent: bound.agent,
      message: `the session ran under certificate ${bound.serial} (${bound.digest}), not the one given`,
    });
}
