/**
 * A net change of the working tree, and how changes are made from the start and end states of
 * paths: equal content is no change, a deletion whose exact content reappears under a new path is
 * a rename, and a path whose content could not be read is a change whose content is unknown.
 */
import { type Content, isUnread, type Unreadable } from './content.js';
import { compareRaw } from './paths.js';

export type NetOperation = 'created' | 'modified' | 'deleted' | 'renamed';

export interface WorkspaceChange {
  /** Raw path (latin1 string of its bytes). */
  raw: string;
  operation: NetOperation;
  /** For a rename: the raw path it came from. */
  fromRaw?: string;
  /** "sha256:<hex>" at the start, when known (dirty files and the tree snapshot). */
  before?: string;
  /** "sha256:<hex>" now. */
  after?: string;
  /** The path is there but its content could not be read now: the error's code. */
  unreadable?: string;
  /** Where the file lies when it is not the path under the tree's top (git's own files of a linked worktree, a submodule). */
  location?: string;
}

export interface WorkspaceDiff {
  mode: 'git' | 'tree';
  changes: WorkspaceChange[];
  /** Paths not looked at because of the limit (or a nested repository not listed). */
  skipped: number;
  /**
   * Of those, the ones the start could have been compared with: what the session created or changed
   * went past the limit, so the pass could not look at everything it should have.
   */
  skippedSession: number;
  /** Files whose content, and folders whose files, could not be read at the close. */
  unreadable: Unreadable[];
  limit: number;
  /** The commit at the start and now, in git. */
  commit?: { start?: string; end?: string };
}

/**
 * The start state of one path: a SHA-256 (dirty or snapshotted), a git blob id, unreadable, or
 * absent (null); none of these (`{}`): present, its content not recorded.
 */
export interface Start {
  sha256?: string;
  blob?: string;
  unreadable?: string;
}

/** Whether a path holds at the end what it held at the start; unreadable at both ends: not a change. */
export function same(start: Start | null, end: Content): boolean {
  if (start === null || end === null) return start === end;
  if (isUnread(end) || start.unreadable !== undefined) return isUnread(end) && start.unreadable !== undefined;
  return start.sha256 !== undefined ? start.sha256 === end.sha256 : start.blob === end.blob;
}

export interface Differing {
  raw: string;
  start: Start | null;
  end: Content;
  location?: string;
}

/** Pairs deletions with creations of the same content, in byte order of both paths. */
export function pairRenames(changes: readonly Differing[]): WorkspaceChange[] {
  const deleted = changes.filter((c) => c.start !== null && c.end === null);
  const used = new Set<string>();
  const out: WorkspaceChange[] = [];
  for (const c of changes) {
    const end = c.end;
    if (c.start === null && end !== null && !isUnread(end)) {
      const from = deleted.find((d) => !used.has(d.raw) && same(d.start, end));
      if (from !== undefined) {
        used.add(from.raw);
        const change: WorkspaceChange = {
          raw: c.raw,
          operation: 'renamed',
          fromRaw: from.raw,
          after: end.sha256,
        };
        if (from.start?.sha256 !== undefined) change.before = from.start.sha256;
        if (c.location !== undefined) change.location = c.location;
        out.push(change);
        continue;
      }
    }
    const operation: NetOperation = c.start === null ? 'created' : end === null ? 'deleted' : 'modified';
    const change: WorkspaceChange = { raw: c.raw, operation };
    if (c.start?.sha256 !== undefined) change.before = c.start.sha256;
    if (isUnread(end)) change.unreadable = end.unreadable;
    else if (end !== null) change.after = end.sha256;
    if (c.location !== undefined) change.location = c.location;
    out.push(change);
  }
  return out.filter((c) => !(c.operation === 'deleted' && used.has(c.raw))).sort(byPath);
}

export function byPath(a: { raw: string }, b: { raw: string }): number {
  return compareRaw(a.raw, b.raw);
}
