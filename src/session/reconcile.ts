/**
 * Reconciliation at close: the working tree against the baseline the session recorded at its
 * start. Every net change no other channel reported becomes a `file.changed` record of the
 * reconcile source; one `tally.reconcile.summary` record lists the paths it corroborated (seen by
 * another channel too) with their net operation, and what a limit left out. Corroborated paths
 * past the summary's share of its record go in `tally.reconcile.corroborated` records before it.
 * The reports and the parts each name the attempt the summary names: a close that dies before its
 * summary leaves records no summary claims, and neither the receipt nor a later pass reads them.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Boundary } from '../boundary/boundary.js';
import { eventId } from '../boundary/prepare.js';
import { type Baseline, type CapturedBaseline, captureBaseline } from '../capture/reconcile/baseline.js';
import type { Unreadable } from '../capture/reconcile/content.js';
import { ReconcileError } from '../capture/reconcile/error.js';
import { fileChangedEvent } from '../capture/reconcile/events.js';
import { pathOut } from '../capture/reconcile/paths.js';
import { diffWorkspace, type WorkspaceDiff } from '../capture/reconcile/reconcile.js';
import { type StatSnapshot, statOfJson } from '../capture/reconcile/stat.js';
import { snapshotOfJson, type TreeSnapshot } from '../capture/reconcile/workspace.js';
import { parseJson } from '../core/canonical.js';
import { digest } from '../core/hash.js';
import { isJsonObject } from '../core/json.js';
import { ByteBudget, CORROBORATED_BYTES, jsonBytes } from '../core/json-budget.js';
import { readRegularFileOrNull, writeRegularFileSync } from '../core/regular-file.js';
import { ReceiptComposer } from '../evidence/receipt/receipt.js';
import {
  isCloseRecord,
  RECONCILE_CORROBORATED_TYPE,
  RECONCILE_SOURCE,
  RECONCILE_SUMMARY_TYPE,
  RENAME_SOURCES_KEPT,
} from '../evidence/record/close-passes.js';
import type { EventRecord } from '../evidence/record/record.js';
import { sessionDir } from './store.js';

export const RECONCILE_URI = 'urn:tally:reconcile';

/** Unreadable paths the summary names at most; its count is always whole. */
export const UNREADABLE_LISTED = 100;

/** The snapshots kept beside the session, outside git and in git: of its start, and of its end. */
const KEPT_FILES = {
  start: { tree: 'baseline-tree.json', stat: 'baseline-stat.json' },
  end: { tree: 'end-tree.json', stat: 'end-stat.json' },
} as const;
/** The largest kept snapshot read back (a stat snapshot of a million files is about 120 MB). */
const KEPT_LIMIT = 512 * 1024 * 1024;

/**
 * Keeps the snapshot a baseline was taken with beside the session, as its start's or its end's:
 * the tree snapshot outside git, the stat snapshot in git (its digest is in the signed record).
 */
export function keepSnapshot(
  state: string,
  id: string,
  which: keyof typeof KEPT_FILES,
  captured: Pick<CapturedBaseline, 'snapshotBytes' | 'statBytes'>,
): void {
  const dir = sessionDir(state, id);
  const files = KEPT_FILES[which];
  if (captured.snapshotBytes !== undefined)
    writeRegularFileSync(join(dir, files.tree), captured.snapshotBytes, 0o600);
  if (captured.statBytes !== undefined)
    writeRegularFileSync(join(dir, files.stat), captured.statBytes, 0o600);
}

/**
 * A kept snapshot's text, read once, or 'altered' when it is gone, not a regular file (never waited
 * on), or its digest is not the one recorded.
 */
function readKept(state: string, id: string, file: string, expected: string): string | 'altered' {
  // Beside the session, where an agent that writes the project's .tally/ can put a FIFO: opened
  // without waiting, read only if it is a regular file.
  const bytes = readRegularFileOrNull(join(sessionDir(state, id), file), KEPT_LIMIT);
  if (bytes === null || digest(bytes) !== expected) return 'altered';
  return bytes.toString('utf8');
}

/**
 * The snapshot kept beside the session for its start or its end (checked against the digest the
 * signed record holds), `altered`, or none for a git baseline without a stat snapshot (an earlier
 * version's).
 */
export function keptSnapshot(
  state: string,
  id: string,
  baseline: Baseline,
  which: keyof typeof KEPT_FILES = 'start',
): { startTree?: TreeSnapshot; startStat?: StatSnapshot } | 'altered' {
  const files = KEPT_FILES[which];
  if (baseline.tree !== undefined) {
    const text = readKept(state, id, files.tree, baseline.tree.digest);
    return text === 'altered' ? text : { startTree: snapshotOfJson(parseJson(text)) };
  }
  if (baseline.stat !== undefined) {
    const text = readKept(state, id, files.stat, baseline.stat.digest);
    // Plain JSON.parse: the file is Tally's own, its digest checked, and too large (megabytes)
    // for the strict parser to be cheap.
    return text === 'altered' ? text : { startStat: statOfJson(JSON.parse(text)) };
  }
  return {};
}

/**
 * The tree's state at the close, taken as the start baseline is and shaped as it, for the next
 * session of the root to compare with (docs/reconcile.md, "Between sessions"); its snapshot is kept
 * beside the closed session, its digest in the state.
 */
async function keepEndState(
  state: string,
  id: string,
  root: string,
  bounds: { limit?: number; timeoutMs?: number },
): Promise<Baseline> {
  const end = await captureBaseline(root, bounds.limit, {
    ...(bounds.timeoutMs ? { timeoutMs: bounds.timeoutMs } : {}),
  });
  keepSnapshot(state, id, 'end', end);
  return end.baseline;
}

/** What could not be read, as a summary names it: the first paths, the count whole. */
export function unreadableSummary(unreadable: readonly Unreadable[]): Record<string, unknown> {
  return {
    count: unreadable.length,
    paths: unreadable.slice(0, UNREADABLE_LISTED).map((u) => ({
      path: pathOut(u.raw).path,
      code: u.code,
      ...(u.folder ? { folder: true } : {}),
    })),
  };
}

/** The baseline and root `session.start` recorded, or null when it recorded none. */
export function recordedBaseline(start: EventRecord): { root: string; baseline: Baseline } | null {
  const extensions = start.event.extensions;
  const workspace = isJsonObject(extensions) ? extensions['dev.tally.workspace'] : undefined;
  if (!isJsonObject(workspace) || typeof workspace.root !== 'string' || !isJsonObject(workspace.baseline))
    return null;
  const baseline = workspace.baseline as unknown as Baseline;
  if (!isJsonObject(baseline.dirty)) return null;
  return { root: workspace.root, baseline };
}

/**
 * One pass over the records: the start record, whether a pass already ran, and what the records
 * already say was written (paths, rename sources included) — composed by the receipt itself, so
 * "seen" means what the receipt would show. A pass that ran before and died before its summary
 * is not among what was seen: the receipt holds its records for a summary that never comes, so
 * what it reported is reported again, by this pass, if it is still changed.
 */
async function readLog(
  records: AsyncIterable<EventRecord> | Iterable<EventRecord>,
): Promise<{ start?: EventRecord; done: boolean; seen: Set<string> }> {
  const composer = new ReceiptComposer();
  let start: EventRecord | undefined;
  let done = false;
  for await (const record of records) {
    // Only the pass's own summary says it ran: a channel's event of that type is not the pass.
    if (isCloseRecord(record, RECONCILE_SUMMARY_TYPE)) done = true;
    if (start === undefined && record.event.type === 'session.start') start = record;
    composer.add(record);
  }
  const seen = new Set<string>();
  if (composer.records === 0) return { done, seen };
  // Every row, not the receipt's share of them: a path the share leaves out was seen all the same.
  for (const row of composer.finish('0'.repeat(64), Number.POSITIVE_INFINITY).files_written) {
    if (row.outside_repo) continue;
    seen.add(row.path);
    if (row.from !== undefined) seen.add(row.from);
  }
  return { ...(start ? { start } : {}), done, seen };
}

/** Corroborated entries, in order, cut into lists that each fit a record's share. */
function inShares(entries: readonly Record<string, unknown>[]): Record<string, unknown>[][] {
  const shares: Record<string, unknown>[][] = [];
  let share: Record<string, unknown>[] = [];
  let budget = new ByteBudget(CORROBORATED_BYTES);
  for (const entry of entries) {
    const bytes = jsonBytes(entry) + 1;
    if (!budget.take(bytes)) {
      shares.push(share);
      share = [];
      budget = new ByteBudget(CORROBORATED_BYTES);
      budget.take(bytes);
    }
    share.push(entry);
  }
  return [...shares, share];
}

export interface ReconcileOutcome {
  mode: WorkspaceDiff['mode'] | 'none';
  reported: number;
  corroborated: number;
  skipped: number;
}

/**
 * Runs the pass once per session (a close that crashed after it does not run it again) and
 * records what it found through the session's boundary.
 */
export async function reconcileSession(options: {
  state: string;
  session: string;
  records: AsyncIterable<EventRecord> | Iterable<EventRecord>;
  boundary: Boundary;
  now: () => Date;
  limit?: number;
  /** How long the pass's git commands may take together. */
  timeoutMs?: number;
}): Promise<ReconcileOutcome | null> {
  const { boundary } = options;
  const { start, done, seen } = await readLog(options.records);
  if (done) return null;
  const recorded = start === undefined ? null : recordedBaseline(start);
  if (recorded === null) return null;
  const { root, baseline } = recorded;
  // Named before the first record: every report and part of this pass, and its summary, name it.
  const attempt = randomBytes(8).toString('hex');
  const mode = baseline.tree === undefined ? 'git' : 'tree';
  const source = RECONCILE_SOURCE;
  const summary: Record<string, unknown> = { mode };
  let diff: WorkspaceDiff | null = null;
  const bounds = {
    ...(options.limit ? { limit: options.limit } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  };
  // Before the pass: a write landing after this and before the pass is in both; taken after the
  // pass, a write landing between the two would be in the end state and in no receipt.
  summary.end = await keepEndState(options.state, options.session, root, bounds);
  try {
    const snapshot = keptSnapshot(options.state, options.session, baseline);
    if (snapshot === 'altered') summary.baseline = 'altered';
    else diff = await diffWorkspace(root, baseline, { ...snapshot, ...bounds });
  } catch (error) {
    // A tree that cannot be compared (git missing, an index git cannot read) must not stop the close:
    // the summary says why nothing was reconciled.
    if (!(error instanceof ReconcileError)) throw error;
    summary.error = { code: error.code, message: error.message };
  }
  const corroborated: Record<string, unknown>[] = [];
  let reported = 0;
  for (const change of diff?.changes ?? []) {
    const path = pathOut(change.raw).path;
    const from = change.fromRaw === undefined ? undefined : pathOut(change.fromRaw).path;
    if (seen.has(path) && (from === undefined || seen.has(from))) {
      const entry: Record<string, unknown> = { path, operation: change.operation };
      if (from !== undefined) entry.from = from;
      if (change.after !== undefined) entry.after = change.after;
      corroborated.push(entry);
      continue;
    }
    const event = fileChangedEvent(change, {
      session: options.session,
      time: options.now().toISOString(),
      source: RECONCILE_URI,
    });
    // A report is held, like a part, until the summary of its attempt claims it.
    (event.extensions as Record<string, unknown>)['dev.tally.reconcile'] = { attempt };
    await boundary.note({ source, event });
    reported++;
  }
  // git's own files the start could not record: a change to one of them may not be seen.
  if (baseline.git_state_cut !== undefined) summary.git_state_cut = baseline.git_state_cut;
  if (diff !== null) {
    summary.limit = diff.limit;
    summary.skipped = diff.skipped;
    if (diff.skippedSession > 0) summary.skipped_session = diff.skippedSession;
    if (diff.unreadable.length > 0) summary.unreadable = unreadableSummary(diff.unreadable);
    if (diff.commit !== undefined) summary.commit = diff.commit;
  }
  summary.reported = reported;
  // What the summary's share does not hold goes first, in records of their own.
  const [first = [], ...rest] = inShares(corroborated);
  const passRecord = (type: string, body: Record<string, unknown>) =>
    boundary.note({
      source,
      event: {
        id: eventId(),
        type,
        time: options.now().toISOString(),
        source: RECONCILE_URI,
        session: { id: options.session },
        extensions: { 'dev.tally.reconcile': body },
      },
    });
  for (const [i, part] of rest.entries())
    await passRecord(RECONCILE_CORROBORATED_TYPE, {
      attempt,
      corroborated: part,
      part: i + 2,
      parts: rest.length + 1,
    });
  summary.attempt = attempt;
  // The receipt keeps a source this pass reported as a row of its own when it paired no rename
  // there (docs/receipt.md); a summary without this field was sealed under the earlier rule.
  summary.rename_sources = RENAME_SOURCES_KEPT;
  summary.corroborated = first;
  if (rest.length > 0) summary.corroborated_parts = rest.length + 1;
  await passRecord(RECONCILE_SUMMARY_TYPE, summary);
  // The pass runs once per session: with its summary recorded, the start snapshots have served.
  for (const file of Object.values(KEPT_FILES.start))
    rmSync(join(sessionDir(options.state, options.session), file), { force: true });
  return { mode, reported, corroborated: corroborated.length, skipped: diff?.skipped ?? 0 };
}
