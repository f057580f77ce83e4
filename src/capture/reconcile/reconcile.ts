/**
 * The working tree at close against the baseline of the start: every path whose content (or
 * existence) differs, with its net operation. In git every file of the start's stat snapshot and
 * every file the tree holds now is a candidate, and those whose stat differs from the snapshot's
 * are compared by content with the start (the repository's index and objects are not trusted to
 * say which changed); outside git, the two tree snapshots. A deleted file whose content reappears
 * under a new path is a rename. Order is byte order of the paths; at most `limit` paths are
 * compared and the rest are counted.
 */
import { type Baseline, headOf } from './baseline.js';
import { listNested, listVisible } from './listing.js';
import { type StatSnapshot, sameStat, statOf } from './stat.js';
import {
  compareRaw,
  DEFAULT_FILE_LIMIT,
  type FileIdentity,
  gitBufferAsync,
  gitStatePaths,
  identify,
  insideTally,
  nulList,
  objectFormat,
  ReconcileError,
  rawOfText,
  rawPath,
  snapshotTree,
  type TreeSnapshot,
  treeBlobs,
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

/**
 * The start state of one path: a SHA-256 (dirty or snapshotted), a git blob id, or absent (null);
 * neither (`{}`): present, its content not recorded (a dirty file past the limit).
 */
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

function isGitState(raw: string): boolean {
  return raw.startsWith('.git/');
}

/** A relative path git could hold: an index entry naming anything else is not looked at. */
function plainPath(raw: string): boolean {
  return !raw.startsWith('/') && raw.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
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
  /**
   * In git: the start's stat snapshot (read back and checked the same way). Without it (a session
   * an earlier version started) every file is compared by content, with the start commit's blobs
   * as git reads them now.
   */
  startStat?: StatSnapshot;
}

/** The net change of the working tree since the baseline. */
export async function diffWorkspace(
  root: string,
  baseline: Baseline,
  options: DiffOptions = {},
): Promise<WorkspaceDiff> {
  const limit = options.limit ?? DEFAULT_FILE_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new ReconcileError('bad-option', 'the reconcile limit must be a positive integer', {
      field: 'limit',
    });
  if (baseline.tree !== undefined) return diffTrees(root, options.startTree, limit);
  return diffGit(root, baseline, options.startStat, limit);
}

/**
 * Which paths the close compares by content, in byte order: every candidate — a file of the start
 * snapshot, a file the tree shows now (Tally's own listing, and every file of a folder that became
 * a repository of its own during the session), a path the index names now, a file dirty at the
 * start — but one whose stat is as the snapshot recorded it (its ctime vouches for its content) or
 * that is absent at both ends. `recent`: files whose stat could not vouch at the start.
 */
function toCompare(
  root: string,
  stat: StatSnapshot | undefined,
  startOf: (raw: string) => Start | null,
  candidates: Set<string>,
): { recent: string[]; changed: string[]; beyond: number } {
  const recent: string[] = [];
  const changed: string[] = [];
  let beyond = 0;
  for (const raw of [...candidates].sort(compareRaw)) {
    if (insideTally(raw) || isGitState(raw)) continue;
    // Past the snapshot's limit nothing is known of the start: not compared, counted.
    if (stat?.last !== undefined && raw > stat.last) {
      beyond++;
      continue;
    }
    const entry = stat?.files.get(raw);
    const now = statOf(root, raw);
    if (entry?.stat && now !== undefined && sameStat(entry.stat, now)) continue;
    if (now === undefined && startOf(raw) === null) continue;
    if (entry !== undefined && entry.stat === null) recent.push(raw);
    else changed.push(raw);
  }
  return { recent, changed, beyond };
}

async function diffGit(
  root: string,
  baseline: Baseline,
  stat: StatSnapshot | undefined,
  limit: number,
): Promise<WorkspaceDiff> {
  const format = objectFormat(root);
  const dirty = dirtyMap(baseline);
  const start = baseline.commit;
  const blobs =
    stat === undefined && start !== undefined ? treeBlobs(root, start) : new Map<string, string>();
  const startOf = (raw: string): Start | null => {
    if (dirty.has(raw)) {
      const value = dirty.get(raw);
      return value === null || value === undefined ? null : { sha256: value };
    }
    const blob = stat === undefined ? blobs.get(raw) : stat.files.get(raw)?.blob;
    if (blob !== undefined) return { blob };
    return stat?.files.has(raw) ? {} : null;
  };
  // What the index names is a candidate too, never the only source: it is the agent's to write.
  const [visible, indexed] = await Promise.all([
    listVisible(root),
    gitBufferAsync(root, ['ls-files', '-z', '--cached']),
  ]);
  const candidates = new Set([...visible.files, ...dirty.keys(), ...(stat?.files.keys() ?? blobs.keys())]);
  // New repository folders share one budget of `limit` files; what is past it is counted.
  let budget = limit;
  let unwalked = 0;
  for (const folder of visible.nested) {
    if (stat === undefined || stat.nested.has(folder)) continue;
    const listing = listNested(root, folder, budget);
    for (const raw of listing.paths) candidates.add(raw);
    budget -= listing.paths.length;
    unwalked += listing.skipped;
  }
  for (const raw of nulList(indexed)) if (plainPath(raw)) candidates.add(raw);
  const { recent, changed, beyond } = toCompare(root, stat, startOf, candidates);
  // git's own config, hooks and info files: always compared (a few files, not counted in the limit).
  const watched = [...new Set([...gitStatePaths(root), ...[...dirty.keys()].filter(isGitState)])];
  const looked = [...recent, ...changed.slice(0, limit), ...watched].sort(compareRaw);
  const differing: { raw: string; start: Start | null; end: FileIdentity | null }[] = [];
  for (const raw of looked) {
    const before = startOf(raw);
    const end = identify(root, raw, format);
    if (!same(before, end)) differing.push({ raw, start: before, end });
  }
  const end = headOf(root);
  const commit: WorkspaceDiff['commit'] = {};
  if (start !== undefined) commit.start = start;
  if (end !== undefined) commit.end = end;
  return {
    mode: 'git',
    changes: pairRenames(differing),
    skipped: beyond + unwalked + Math.max(0, changed.length - limit),
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
