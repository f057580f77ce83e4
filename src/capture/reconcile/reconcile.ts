/**
 * The working tree at close against the baseline of the start: every path whose content (or
 * existence) differs, with its net operation. In git the candidates are what differs from the
 * start commit (commits made during the session included), what is untracked now, and what was
 * dirty at the start; outside git, the two tree snapshots. A deleted file whose content reappears
 * under a new path is a rename. Order is byte order of the paths; at most `limit` paths are
 * looked at and the rest are counted.
 */
import type { Baseline } from './baseline.js';
import {
  compareRaw,
  DEFAULT_FILE_LIMIT,
  type FileIdentity,
  gitBuffer,
  gitStatePaths,
  identify,
  nulList,
  objectFormat,
  ReconcileError,
  rawOfText,
  rawPath,
  snapshotTree,
  type TreeSnapshot,
  UNTRACKED_ARGS,
  unwatchedPaths,
} from './workspace.js';

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
}

export interface WorkspaceDiff {
  mode: 'git' | 'tree';
  changes: WorkspaceChange[];
  /** Paths not looked at because of the limit. */
  skipped: number;
  limit: number;
  /** The commit at the start and now, in git. */
  commit?: { start?: string; end?: string };
}

/** The start state of one path: a SHA-256 (dirty or snapshotted), a git blob id, or absent. */
interface Start {
  sha256?: string;
  blob?: string;
}

function same(start: Start | null, end: FileIdentity | null): boolean {
  if (start === null || end === null) return start === end;
  return start.sha256 !== undefined ? start.sha256 === end.sha256 : start.blob === end.blob;
}

/** The baseline's dirty map with raw paths (UTF-8 names and the base64 ones together). */
function dirtyMap(baseline: Baseline): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const [path, value] of Object.entries(baseline.dirty)) out.set(rawOfText(path), value);
  for (const [b64, value] of Object.entries(baseline.dirty_b64 ?? {}))
    out.set(rawPath(Buffer.from(b64, 'base64')), value);
  for (const [path, value] of Object.entries(baseline.git_state ?? {}))
    if (isGitState(path) && typeof value === 'string') out.set(rawOfText(path), value);
  return out;
}

/** `git ls-tree -r` of a commit: raw path → blob id (gitlinks left out). */
function treeBlobs(root: string, commit: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of nulList(gitBuffer(root, ['ls-tree', '-r', '-z', '--full-tree', commit]))) {
    const tab = entry.indexOf('\t');
    const [mode, type, id] = entry.slice(0, tab).split(' ');
    if (type !== 'blob' || mode === '160000' || id === undefined) continue;
    out.set(entry.slice(tab + 1), id);
  }
  return out;
}

function headNow(root: string): string | undefined {
  try {
    const out = gitBuffer(root, ['rev-parse', '--verify', '--quiet', 'HEAD']).toString('utf8').trim();
    return out === '' ? undefined : out;
  } catch {
    return undefined;
  }
}

function isGitState(raw: string): boolean {
  return raw.startsWith('.git/');
}

function notTally(raw: string): boolean {
  return raw !== '.tally' && !raw.startsWith('.tally/');
}

/** Pairs deletions with creations of the same content, in byte order of both paths. */
function pairRenames(
  changes: { raw: string; start: Start | null; end: FileIdentity | null }[],
): WorkspaceChange[] {
  const deleted = changes.filter((c) => c.start !== null && c.end === null);
  const used = new Set<string>();
  const out: WorkspaceChange[] = [];
  for (const c of changes) {
    if (c.start === null && c.end !== null) {
      const end = c.end;
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
        out.push(change);
        continue;
      }
    }
    const operation: NetOperation = c.start === null ? 'created' : c.end === null ? 'deleted' : 'modified';
    const change: WorkspaceChange = { raw: c.raw, operation };
    if (c.start?.sha256 !== undefined) change.before = c.start.sha256;
    if (c.end !== null) change.after = c.end.sha256;
    out.push(change);
  }
  return out
    .filter((c) => !(c.operation === 'deleted' && used.has(c.raw)))
    .sort((a, b) => compareRaw(a.raw, b.raw));
}

export interface DiffOptions {
  limit?: number;
  /** Outside git: the start snapshot (read back from beside the session and checked by the caller). */
  startTree?: TreeSnapshot;
}

/** The net change of the working tree since the baseline. */
export function diffWorkspace(root: string, baseline: Baseline, options: DiffOptions = {}): WorkspaceDiff {
  const limit = options.limit ?? DEFAULT_FILE_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new ReconcileError('bad-option', 'the reconcile limit must be a positive integer', {
      field: 'limit',
    });
  if (baseline.tree !== undefined) return diffTrees(root, options.startTree, limit);
  const format = objectFormat(root);
  const dirty = dirtyMap(baseline);
  const start = baseline.commit;
  const changed = start
    ? nulList(
        gitBuffer(root, [
          'diff',
          '--name-only',
          '-z',
          '--no-renames',
          '--ignore-submodules=all',
          start,
          '--',
        ]),
      )
    : nulList(gitBuffer(root, ['ls-files', '-z', '--cached']));
  const untracked = nulList(gitBuffer(root, ['ls-files', '-z', ...UNTRACKED_ARGS]));
  // What git would pass over (assume-unchanged, skip-worktree) is looked at here, content against
  // content; so are git's own config, hooks and info files, always (a few files, not counted in the
  // limit).
  const state = gitStatePaths(root);
  const all = [...new Set([...changed, ...untracked, ...unwatchedPaths(root), ...dirty.keys()])]
    .filter((raw) => notTally(raw) && !isGitState(raw))
    .sort(compareRaw);
  const watched = [...new Set([...state, ...[...dirty.keys()].filter(isGitState)])];
  const looked = [...all.slice(0, limit), ...watched].sort(compareRaw);
  const blobs = start ? treeBlobs(root, start) : new Map<string, string>();
  const differing: { raw: string; start: Start | null; end: FileIdentity | null }[] = [];
  for (const raw of looked) {
    let before: Start | null;
    if (dirty.has(raw)) {
      const value = dirty.get(raw);
      before = value === null || value === undefined ? null : { sha256: value };
    } else {
      const blob = blobs.get(raw);
      before = blob === undefined ? null : { blob };
    }
    const end = identify(root, raw, format);
    if (!same(before, end)) differing.push({ raw, start: before, end });
  }
  const end = headNow(root);
  const commit: WorkspaceDiff['commit'] = {};
  if (start !== undefined) commit.start = start;
  if (end !== undefined) commit.end = end;
  return {
    mode: 'git',
    changes: pairRenames(differing),
    skipped: Math.max(0, all.length - limit),
    limit,
    commit,
  };
}

function diffTrees(root: string, startTree: TreeSnapshot | undefined, limit: number): WorkspaceDiff {
  if (startTree === undefined)
    throw new ReconcileError('baseline', 'the session recorded a tree baseline but none was given', {
      field: 'tree',
    });
  const now = snapshotTree(root, false, limit);
  return {
    mode: 'tree',
    changes: diffSnapshots(startTree, now),
    skipped: Math.max(startTree.skipped, now.skipped),
    limit,
  };
}

/** The net changes from one snapshot to another (`tally wrap`, the tree mode of the close). */
export function diffSnapshots(before: TreeSnapshot, after: TreeSnapshot): WorkspaceChange[] {
  const keys = [...new Set([...before.files.keys(), ...after.files.keys()])].sort(compareRaw);
  const differing: { raw: string; start: Start | null; end: FileIdentity | null }[] = [];
  for (const raw of keys) {
    const was = before.files.get(raw);
    const end = after.files.get(raw) ?? null;
    const start = was === undefined ? null : { sha256: was.sha256 };
    if (!same(start, end)) differing.push({ raw, start, end });
  }
  return pairRenames(differing);
}
