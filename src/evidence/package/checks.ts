/**
 * The verifier's vocabulary: every check name, in the one order results are reported, and the
 * running list of results. Check names are snake_case, failure codes kebab-case
 * (docs/formats.md#verification-result).
 */

export type CheckName =
  | 'package_format'
  | 'signer_pinned'
  | 'record_format'
  | 'record_signatures'
  | 'record_session'
  | 'record_sequence'
  | 'record_chain'
  | 'record_count'
  | 'not_after_now'
  | 'timestamps_ordered'
  | 'session_complete'
  | 'call_ids_unique'
  | 'unfinished_call'
  | 'log_repaired'
  | 'workspace_reconciled'
  | 'between_sessions'
  | 'harness_reported'
  | 'merkle_root'
  | 'receipt_signature'
  | 'receipt_recomputed'
  | 'receipt_complete'
  | 'certificate_signature'
  | 'certificate_bound'
  | 'ship_id_match'
  | 'within_validity_window'
  | 'certificate_at_now'
  | 'unauthorized_calls'
  | 'escalations'
  | 'never_called';

export interface CheckResult {
  check: CheckName;
  ok: boolean;
  /** "ok", "skipped", "info", or a failure code naming what broke. */
  code: string;
  detail: string | Record<string, unknown>;
}

/** Every check, in the order it is reported. */
export const CHECK_ORDER: readonly CheckName[] = [
  'package_format',
  'signer_pinned',
  'record_format',
  'record_signatures',
  'record_session',
  'record_sequence',
  'record_chain',
  'record_count',
  'not_after_now',
  'timestamps_ordered',
  'session_complete',
  'call_ids_unique',
  'unfinished_call',
  'log_repaired',
  'workspace_reconciled',
  'between_sessions',
  'harness_reported',
  'merkle_root',
  'receipt_signature',
  'receipt_recomputed',
  'receipt_complete',
  'certificate_signature',
  'certificate_bound',
  'ship_id_match',
  'within_validity_window',
  'certificate_at_now',
  'unauthorized_calls',
  'escalations',
  'never_called',
];

/** The checks of the records themselves (one streaming pass), in order. */
export const RECORD_CHECKS = CHECK_ORDER.filter((check) => check.startsWith('record_'));
/** The checks run only with a certificate, in order. */
export const CROSS_CHECKS = CHECK_ORDER.slice(CHECK_ORDER.indexOf('certificate_signature'));
/** The checks that run whenever the package could be opened. */
export const PACKAGE_CHECKS = CHECK_ORDER.slice(0, CHECK_ORDER.indexOf('certificate_signature'));

export class Checks {
  readonly list: CheckResult[] = [];
  pass(check: CheckName, detail: CheckResult['detail'], code = 'ok'): void {
    this.list.push({ check, ok: true, code, detail });
  }
  fail(check: CheckName, code: string, detail: CheckResult['detail']): void {
    this.list.push({ check, ok: false, code, detail });
  }
  skip(checks: readonly CheckName[], why: string): void {
    for (const check of checks)
      if (!this.list.some((c) => c.check === check))
        this.list.push({ check, ok: false, code: 'skipped', detail: why });
  }
  /** The results in the one fixed order of CHECK_ORDER, however verification ended. */
  sort(): void {
    this.list.sort((a, b) => CHECK_ORDER.indexOf(a.check) - CHECK_ORDER.indexOf(b.check));
  }
}
