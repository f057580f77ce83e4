/**
 * One `files_written` row per path (receipt v2): every witness of a path joined into the row of its
 * net operation over the session. The reconcile pass compared the end of the session with its
 * start, so its operation is the net one whenever it reported the path (a `file.changed` of its
 * own, or a corroborated path in its summary). Otherwise the witnesses are read in order: the
 * earliest says whether the file existed before (`created`/`renamed`: no; `modified`/`deleted`:
 * yes; `written`: unknown), the latest whether it exists after (`deleted`: no).
 */
import type { FileOperation } from '../normalize.js';
import { RECONCILE_SOURCE, TRANSCRIPT_SOURCE } from '../record/close-passes.js';

/** What the net fold needs of a gathered group (files.ts's `WriteGroup`). */
export interface NetGroup {
  path: string;
  operation: FileOperation;
  from?: string;
  /** A reconcile pass reported this (path, operation, from). */
  reconciled: boolean;
  firstSeq: number;
  lastSeq: number;
}

export const RECONCILE_SOURCES: ReadonlySet<string> = new Set([RECONCILE_SOURCE]);

function earliest<G extends NetGroup>(groups: readonly G[]): G {
  return groups.reduce((a, b) => (b.firstSeq < a.firstSeq ? b : a));
}

function latest<G extends NetGroup>(groups: readonly G[]): G {
  return groups.reduce((a, b) => (b.lastSeq >= a.lastSeq ? b : a));
}

/** The net (operation, from) of one path's groups. */
export function netOperation(
  path: string,
  all: readonly NetGroup[],
): { operation: FileOperation; from?: string } {
  // Witnesses of a rename's source joined this row; whether the file existed is its own path's.
  const groups = all.filter((g) => g.path === path);
  const reconciled = groups.filter((g) => g.reconciled);
  if (reconciled.length > 0) {
    const g = latest(reconciled);
    return g.from === undefined ? { operation: g.operation } : { operation: g.operation, from: g.from };
  }
  const first = earliest(groups);
  const last = latest(groups);
  const existedBefore =
    first.operation === 'created' || first.operation === 'renamed'
      ? false
      : first.operation === 'written'
        ? undefined
        : true;
  const existsAfter = last.operation !== 'deleted';
  if (!existsAfter) return { operation: 'deleted' };
  if (existedBefore === true) return { operation: 'modified' };
  const renamed = groups.filter((g) => g.operation === 'renamed' && g.from !== undefined);
  if (renamed.length > 0) return { operation: 'renamed', from: earliest(renamed).from! };
  if (existedBefore === false) return { operation: 'created' };
  const definite = groups.filter((g) => g.operation !== 'written');
  return { operation: definite.length > 0 ? latest(definite).operation : 'written' };
}

/**
 * Groups by the path their row will carry: a path that is only the source of a rename (and was not
 * itself reported by the reconcile pass, in any operation — or, `keepDeletedSources` false, in any
 * but `deleted` — nor witnessed after the rename) joins the rename's row.
 */
export function groupsByRow<G extends NetGroup>(
  groups: readonly G[],
  keepDeletedSources: boolean,
): Map<string, G[]> {
  const byPath = new Map<string, G[]>();
  for (const g of groups) {
    const list = byPath.get(g.path);
    if (list === undefined) byPath.set(g.path, [g]);
    else list.push(g);
  }
  const renames = groups.filter(
    (g) => g.operation === 'renamed' && g.from !== undefined && g.from !== g.path,
  );
  for (const rename of renames.sort((a, b) => a.firstSeq - b.firstSeq)) {
    const source = byPath.get(rename.from!);
    const target = byPath.get(rename.path);
    if (source === undefined || target === undefined || source === target) continue;
    // The pass compared the end with the start: a source it reported (deleted too) keeps its own
    // row. Had it paired the two paths itself, it would have reported the rename at the target
    // and nothing at the source; a channel's word that a deleted file became another is not that.
    // (`keepDeletedSources` false: a package whose pass's summary predates that rule, composed as
    // it was signed.)
    const own = source.some((g) => g.reconciled && (keepDeletedSources || g.operation !== 'deleted'));
    const after = source.some((g) => g.lastSeq > rename.lastSeq && !g.reconciled);
    if (own || after) continue;
    target.push(...source);
    byPath.delete(rename.from!);
  }
  return byPath;
}

/**
 * True when, of the channels that saw something, only the agent's own transcript did (the reconcile
 * pass aside): a hook should have reported it and did not. The receipt flags it.
 */
export function seenOnlyInTranscript(sources: Iterable<string>): boolean {
  let transcript = false;
  for (const source of sources) {
    if (source === TRANSCRIPT_SOURCE) transcript = true;
    else if (!RECONCILE_SOURCES.has(source)) return false;
  }
  return transcript;
}
