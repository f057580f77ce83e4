/**
 * What changed in the tree between the previous session's close and this start: the previous
 * session's end state (./previous.ts) compared with the tree by the close's own comparison, recorded
 * in the new session's signed `session.start` as `since` (docs/reconcile.md, "Between sessions").
 * Nothing here is attributed to the new session: it is a report, never a row of its own.
 */
import type { Baseline, CapturedBaseline } from '../../capture/reconcile/baseline.js';
import { ReconcileError } from '../../capture/reconcile/error.js';
import { pathOut } from '../../capture/reconcile/paths.js';
import {
  diffWorkspace,
  type WorkspaceChange,
  type WorkspaceDiff,
} from '../../capture/reconcile/reconcile.js';
import { diffSnapshots } from '../../capture/reconcile/trees.js';
import { ByteBudget, jsonBytes, SINCE_BYTES } from '../../core/json-budget.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { keptSnapshot, unreadableSummary } from '../reconcile.js';
import { type Previous, previousSession } from './previous.js';

/** Changed paths `since` lists at most (and no more than `SINCE_BYTES` of them); its `count` is always whole. */
export const SINCE_LISTED = 1000;

export type Since = Record<string, unknown> & { state: string };

/** The `since` of a start in `root`, whose own baseline is `start`. */
export async function sinceLastSession(options: {
  state: string;
  root: string;
  home: string;
  trusted: readonly PublicKeyInput[];
  now: Date;
  start: CapturedBaseline;
  limit?: number;
  timeoutMs?: number;
}): Promise<Since> {
  const previous = await previousSession(options);
  if (previous.state !== 'verified') return fromPrevious(previous);
  const named: Since = {
    state: 'unchanged',
    session: previous.session,
    package: previous.package,
    package_digest: previous.package_digest,
    ...(previous.closed_at ? { closed_at: previous.closed_at } : {}),
  };
  const end = previous.end;
  if (end === undefined)
    return {
      ...named,
      state: 'no-end-state',
      reason: `session ${previous.session} recorded no end state (sealed by an earlier version, or its close could not take one)`,
    };
  if (end.error !== undefined)
    return {
      ...named,
      state: 'no-end-state',
      reason: `its close could not take the end state: ${end.error.message}`,
    };
  const kept = keptSnapshot(options.state, previous.session, end, 'end');
  try {
    const diff = await compare(options, end, kept);
    return { ...named, ...(kept === 'altered' ? { snapshot: 'altered' } : {}), ...described(diff, end) };
  } catch (error) {
    if (!(error instanceof ReconcileError)) throw error;
    return { ...named, state: 'not-compared', reason: error.message };
  }
}

function fromPrevious(previous: Exclude<Previous, { state: 'verified' }>): Since {
  if (previous.state === 'none') return { state: 'none' };
  return { ...previous };
}

/**
 * The tree now against the end state: outside git the end snapshot against the one the start just
 * took (no second walk); else the close's own comparison, with the end's stat snapshot — or, when
 * that was altered or removed, by content against the end commit's blobs and dirty digests.
 */
async function compare(
  options: { root: string; start: CapturedBaseline; limit?: number; timeoutMs?: number },
  end: Baseline,
  kept: ReturnType<typeof keptSnapshot>,
): Promise<WorkspaceDiff> {
  if (end.tree !== undefined && kept === 'altered')
    throw new ReconcileError('baseline', `the end snapshot of the previous session is gone or altered`);
  const endSnapshot = kept === 'altered' ? {} : kept;
  const now = options.start.snapshot;
  if (endSnapshot.startTree !== undefined && now !== undefined)
    return { mode: 'tree', ...diffSnapshots(endSnapshot.startTree, now), limit: end.tree?.limit ?? 0 };
  const { stat: _stat, ...withoutStat } = end;
  return diffWorkspace(options.root, kept === 'altered' ? withoutStat : end, {
    ...endSnapshot,
    ...(options.limit ? { limit: options.limit } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
}

function described(diff: WorkspaceDiff, end: Baseline): Since {
  const moved = diff.mode === 'git' && diff.commit?.end !== end.commit;
  // Nothing seen changed is `unchanged` only when nothing went unseen: a folder made unlistable
  // after the close hides what was made in it.
  const unseen = [
    ...(diff.unreadable.length > 0 ? [`${diff.unreadable.length} path(s) could not be read`] : []),
    ...(diff.skipped > 0 ? [`${diff.skipped} path(s) past the limit were not compared`] : []),
    ...(end.git_state_cut ? [`${end.git_state_cut} of git's own files were not recorded at the close`] : []),
  ];
  const out: Since = {
    state: diff.changes.length > 0 || moved ? 'changed' : unseen.length > 0 ? 'incomplete' : 'unchanged',
  };
  if (out.state === 'incomplete')
    out.reason = `${unseen.join(', ')}: whether they changed after the close is not known`;
  if (moved)
    out.commit = {
      ...(end.commit ? { end: end.commit } : {}),
      ...(diff.commit?.end ? { start: diff.commit.end } : {}),
    };
  if (diff.changes.length > 0) {
    const budget = new ByteBudget(SINCE_BYTES);
    out.changed = diff.changes
      .slice(0, SINCE_LISTED)
      .map(changeOut)
      .filter((entry) => budget.take(jsonBytes(entry) + 1));
    out.count = diff.changes.length;
  }
  if (diff.skipped > 0) out.skipped = diff.skipped;
  if (diff.unreadable.length > 0) out.unreadable = unreadableSummary(diff.unreadable);
  return out;
}

function changeOut(change: WorkspaceChange): Record<string, unknown> {
  const to = pathOut(change.raw);
  const entry: Record<string, unknown> = { path: to.path, operation: change.operation };
  if (to.path_b64 !== undefined) Object.assign(entry, { path_b64: to.path_b64, non_utf8: true });
  if (change.fromRaw !== undefined) entry.from = pathOut(change.fromRaw).path;
  if (change.before !== undefined) entry.before = change.before;
  if (change.after !== undefined) entry.after = change.after;
  if (change.unreadable !== undefined) entry.unreadable = change.unreadable;
  return entry;
}
