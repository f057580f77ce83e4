/**
 * Two content snapshots of a tree compared: `tally wrap`'s before and after a command, and the
 * close outside git against the start's snapshot. Only paths up to where both snapshots reach are
 * compared; when the later one was cut before the earlier one's bound (or the earlier one was not
 * cut at all), what the session added pushed paths past the limit, and those are counted apart.
 * In git, what a nested repository holds that either listing left unlisted is not compared either,
 * and one the later listing left out that the earlier one listed was pushed out the same way.
 */
import {
  type Differing,
  pairRenames,
  type Start,
  same,
  type WorkspaceChange,
  type WorkspaceDiff,
} from './changes.js';
import type { Content, Unreadable } from './content.js';
import type { Deadline } from './deadline.js';
import { ReconcileError } from './error.js';
import { compareRaw, underAny } from './paths.js';
import { minBound, snapshotTree, type TreeSnapshot } from './workspace.js';

export interface SnapshotDiff {
  changes: WorkspaceChange[];
  /** Paths not compared: past either snapshot's bound. */
  skipped: number;
  /** Of those, the ones the earlier snapshot held or could have: the later one's limit was reached first. */
  skippedSession: number;
  /** The later snapshot's unreadable files and folders. */
  unreadable: Unreadable[];
}

function startIn(snapshot: TreeSnapshot, raw: string): Start | null {
  const id = snapshot.files.get(raw);
  if (id !== undefined) return { sha256: id.sha256 };
  const code = snapshot.unread.get(raw);
  return code === undefined ? null : { unreadable: code };
}

function endIn(snapshot: TreeSnapshot, raw: string): Content {
  const code = snapshot.unread.get(raw);
  return code !== undefined ? { unreadable: code } : (snapshot.files.get(raw) ?? null);
}

function holds(snapshot: TreeSnapshot, raw: string): boolean {
  return snapshot.files.has(raw) || snapshot.unread.has(raw);
}

/** The net changes from one snapshot to another. */
export function diffSnapshots(before: TreeSnapshot, after: TreeSnapshot): SnapshotDiff {
  const bound = minBound(before.last, after.last);
  const keys = new Set([
    ...before.files.keys(),
    ...before.unread.keys(),
    ...after.files.keys(),
    ...after.unread.keys(),
  ]);
  const unlisted = new Set([...(before.unlisted ?? []), ...(after.unlisted ?? [])]);
  const differing: Differing[] = [];
  let outside = 0;
  for (const raw of [...keys].sort(compareRaw)) {
    // Under a nested repository a listing left out, a path the earlier snapshot does not hold was not
    // looked at (one the index named was; the later snapshot looks at it again by its path).
    const unknown = underAny(raw, unlisted) && !holds(before, raw);
    if ((bound !== undefined && raw > bound) || unknown) {
      outside++;
      continue;
    }
    const start = startIn(before, raw);
    const end = endIn(after, raw);
    if (!same(start, end)) differing.push({ raw, start, end });
  }
  const skipped = Math.max(before.skipped, after.skipped) + outside;
  // The later listing stopped before the earlier one's bound, or left out a nested repository the
  // earlier one listed: paths the start knows were not compared.
  const unlistedBefore = new Set(before.unlisted ?? []);
  const cutFirst =
    (after.last !== undefined && (before.last === undefined || after.last < before.last)) ||
    (after.unlisted ?? []).some((folder) => !unlistedBefore.has(folder));
  const unreadable: Unreadable[] = [
    ...after.folders,
    ...[...after.unread].map(([raw, code]) => ({ raw, code })),
  ].sort((a, b) => compareRaw(a.raw, b.raw));
  return { changes: pairRenames(differing), skipped, skippedSession: cutFirst ? skipped : 0, unreadable };
}

export async function diffTrees(
  root: string,
  startTree: TreeSnapshot | undefined,
  limit: number,
  deadline: Deadline,
): Promise<WorkspaceDiff> {
  if (startTree === undefined)
    throw new ReconcileError('baseline', 'the session recorded a tree baseline but none was given', {
      field: 'tree',
    });
  const known = [...startTree.files.keys(), ...startTree.unread.keys()];
  const now = await snapshotTree(root, false, limit, { deadline, known });
  return { mode: 'tree', ...diffSnapshots(startTree, now), limit };
}
