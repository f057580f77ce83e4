/**
 * The checks of the session as a whole (./verify-fold.ts SessionFacts): a key holder can re-sign
 * any log, so signatures and chain prove nothing against one; these make the inconsistencies a
 * forgery or a cut leaves visible. `unfinished_call` is informational: a session may end while a
 * call runs, or a harness may not report every end.
 */
import type { Checks } from './checks.js';
import type { SessionFacts } from './verify-fold.js';
import { count } from './verify-parts.js';

/** Calls listed in `unfinished_call` at most; the count is always whole. */
export const UNFINISHED_LISTED = 100;

/** Paths `between_sessions` names at most (the start record holds up to 1,000). */
const BETWEEN_LISTED = 100;

export function sessionChecks(checks: Checks, facts: SessionFacts, records: number): void {
  if (facts.backwards === null) checks.pass('timestamps_ordered', { records });
  else
    checks.fail('timestamps_ordered', 'time-backwards', {
      ...facts.backwards,
      message: `record ${facts.backwards.seq} is timestamped ${facts.backwards.time}, before the record before it (${facts.backwards.previous})`,
    });
  if (facts.end !== null) checks.pass('session_complete', { end: facts.end });
  else
    checks.fail('session_complete', 'incomplete', {
      records,
      message: 'the session has no session.end record: it was never closed, or its end was cut off',
    });
  if (facts.duplicate === null) checks.pass('call_ids_unique', { records });
  else
    checks.fail('call_ids_unique', 'duplicate-call-id', {
      ...facts.duplicate,
      message: `call id ${facts.duplicate.call} has a second ${facts.duplicate.type} at seq ${facts.duplicate.seq} (the first is at seq ${facts.duplicate.first})`,
    });
  const open = [...facts.open.values()];
  if (open.length === 0) checks.pass('unfinished_call', { count: 0 });
  else
    checks.pass('unfinished_call', { count: open.length, calls: open.slice(0, UNFINISHED_LISTED) }, 'info');
  // Informational: a repair is the recorder's own signed account of bytes it set aside.
  if (facts.repairs.length === 0) checks.pass('log_repaired', { count: 0 });
  else checks.pass('log_repaired', { count: facts.repairs.length, repairs: facts.repairs }, 'info');
  workspaceCheck(checks, facts);
  betweenCheck(checks, facts);
  harnessCheck(checks, facts);
}

/**
 * What the start recorded of the tree between the previous session's close and this start: a
 * report, never a failure — nothing of it can be blamed on this session's agent (docs/security.md).
 */
function betweenCheck(checks: Checks, facts: SessionFacts): void {
  const since = facts.since;
  if (since === null) {
    checks.pass('between_sessions', { reason: 'the start recorded nothing of the previous session' });
    return;
  }
  const detail: Record<string, unknown> = { ...since };
  if (Array.isArray(since.changed)) detail.changed = since.changed.slice(0, BETWEEN_LISTED);
  const previous = typeof since.session === 'string' ? since.session : 'the previous session';
  if (since.state === 'unchanged' || since.state === 'none') checks.pass('between_sessions', detail);
  else if (since.state === 'changed')
    checks.pass(
      'between_sessions',
      { ...detail, message: `the tree changed after session ${previous} closed, before this one started` },
      'info',
    );
  else
    checks.pass(
      'between_sessions',
      {
        ...detail,
        message: `what changed after session ${previous} closed is not known (${String(since.state)})`,
      },
      'info',
    );
}

/**
 * Whether the harness `tally run` wired reported the session: one whose hooks never sent an event,
 * or whose calls ran with only the agent's transcript to show them, was not captured live, whatever
 * the rest of the package says. A session that records no wiring (started otherwise, or sealed
 * before runs recorded it) claims no harness, and passes as before.
 */
function harnessCheck(checks: Checks, facts: SessionFacts): void {
  const wiring = facts.wiring;
  if (wiring === null) {
    checks.pass('harness_reported', { harness: null, reason: 'no run wired a harness for this session' });
    return;
  }
  const detail = { harness: wiring.harness, events: facts.harnessEvents };
  if (facts.harnessEvents === 0)
    checks.fail('harness_reported', 'harness-silent', {
      ...detail,
      transcript_only: facts.transcriptOnly.length,
      message: `${wiring.harness} was wired for this session and none of its hooks reported an event: nothing it did was judged before it ran`,
    });
  else if (facts.transcriptOnly.length > 0)
    checks.fail('harness_reported', 'calls-unreported', {
      ...detail,
      seqs: facts.transcriptOnly,
      message: `${facts.transcriptOnly.length} call(s) ran that no hook of ${wiring.harness} reported; only its transcript shows them`,
    });
  else checks.pass('harness_reported', detail);
}

/**
 * Whether the close compared the workspace with the start baseline: a pass that failed (the start
 * commit gone, git broken or stopped at its deadline), a tree baseline altered on disk, a pass that
 * could not read every file or folder it had to, or one whose limit was reached because of what the
 * session itself created or changed means the receipt cannot show that it holds every change made
 * during the session; so does a summary whose parts or reports the records do not hold as it
 * counts them. A limit the tree was already past at the start, and parts and reports of an attempt
 * that wrote no summary, are only reported.
 */
function workspaceCheck(checks: Checks, facts: SessionFacts): void {
  const foreign = facts.foreignSummary;
  if (foreign !== null) {
    checks.fail('workspace_reconciled', 'summary-forged', {
      ...foreign,
      message: `record ${foreign.seq} is a ${foreign.type} recorded with source '${foreign.source}': only the close's own pass writes one, so a channel's stands in for a pass that may not have run`,
    });
    return;
  }
  const found = facts.reconcile;
  if (found === null) {
    // Informational: packages sealed before closes recorded their pass have no summary either.
    checks.pass(
      'workspace_reconciled',
      {
        reason: facts.baseline
          ? 'the close recorded no reconciliation summary: nothing says whether the workspace was compared'
          : 'the session recorded no start baseline',
      },
      'info',
    );
    return;
  }
  const { seq, summary } = found;
  const error = summary.error as { code?: unknown; message?: unknown } | undefined;
  const skipped = count(summary.skipped);
  const bySession = count(summary.skipped_session);
  const unreadable = summary.unreadable as { count?: unknown; paths?: unknown } | undefined;
  const { unclaimed, unclaimedReports } = facts.parts;
  const detail = {
    seq,
    mode: summary.mode ?? null,
    reported: summary.reported ?? null,
    skipped,
    ...(unclaimed.count > 0 ? { unclaimed_parts: unclaimed } : {}),
    ...(unclaimedReports.count > 0 ? { unclaimed_reports: unclaimedReports } : {}),
  };
  const mismatch = facts.parts.mismatch;
  const reportsMismatch = facts.parts.reportsMismatch;
  if (mismatch !== null)
    checks.fail('workspace_reconciled', 'parts-mismatch', {
      ...mismatch,
      message: `the reconcile summary (seq ${mismatch.seq}) counts ${mismatch.expected} part(s) before it, numbered 2 to ${mismatch.expected + 1}; the records hold ${mismatch.count} of its attempt, numbered ${mismatch.found.map((p) => String(p.part)).join(', ') || 'none'}: the corroborated paths the receipt shows are not the ones the pass listed`,
    });
  else if (reportsMismatch !== null)
    checks.fail('workspace_reconciled', 'reports-mismatch', {
      ...reportsMismatch,
      message: `the reconcile summary (seq ${reportsMismatch.seq}) says the pass reported ${reportsMismatch.expected} change(s); the records hold ${reportsMismatch.count} file.changed of its attempt before it: the changes the receipt shows as the pass's are not the ones it reported`,
    });
  else if (error !== undefined)
    checks.fail('workspace_reconciled', 'reconcile-failed', {
      seq,
      error,
      message: `the workspace could not be compared with the start baseline (${String(error.message ?? error.code ?? 'unknown')}): changes no channel reported may be missing from the receipt`,
    });
  else if (summary.baseline === 'altered')
    checks.fail('workspace_reconciled', 'baseline-altered', {
      seq,
      message:
        'the start snapshot kept beside the session was altered before the close: the workspace was not compared',
    });
  else if (count(summary.git_state_cut) > 0)
    checks.fail('workspace_reconciled', 'baseline-cut', {
      seq,
      git_state_cut: count(summary.git_state_cut),
      message: `the start could not record ${count(summary.git_state_cut)} of git's own files within its record's share (their names fill it): a change to them, a hook deleted or rewritten, may not be seen`,
    });
  else if (unreadable !== undefined)
    checks.fail('workspace_reconciled', 'unreadable', {
      seq,
      count: count(unreadable.count),
      paths: Array.isArray(unreadable.paths) ? unreadable.paths : [],
      message: `${count(unreadable.count)} files or folders could not be read at the close: what they hold was not compared, and changes no channel reported may be missing from the receipt`,
    });
  else if (bySession > 0)
    checks.fail('workspace_reconciled', 'limit-exceeded', {
      ...detail,
      skipped_session: bySession,
      limit: summary.limit ?? null,
      message: `what the session created or changed went past the limit of ${String(summary.limit)} paths: ${bySession} paths the pass had to compare were not`,
    });
  else if (skipped > 0)
    checks.pass('workspace_reconciled', { ...detail, limit: summary.limit ?? null }, 'info');
  else if (unclaimed.count > 0 || unclaimedReports.count > 0)
    // A close that died before its summary, and a later close that ran the pass again: the first
    // attempt's reports and parts stay in the log, and no row reads them.
    checks.pass(
      'workspace_reconciled',
      {
        ...detail,
        message: `${unclaimedReports.count} file.changed and ${unclaimed.count} tally.reconcile.corroborated record(s) belong to an attempt of the pass that wrote no summary: they are not read as witnesses`,
      },
      'info',
    );
  else checks.pass('workspace_reconciled', detail);
}
