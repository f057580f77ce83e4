/**
 * The start-of-session baseline. In a git repository: HEAD, the content digest of every file
 * already dirty or untracked (`.gitignore` respected), so the close blames the session only for
 * what changed after it, and Tally's own stat snapshot of every file with its blob in HEAD, so the
 * close need not ask the repository's index or objects which files changed. Outside git: a
 * snapshot of every file's content hash. A snapshot is kept beside the session, its digest in the
 * signed start record.
 */
import { canonicalize } from '../../core/canonical.js';
import { digest } from '../../core/hash.js';
import { listVisible, type VisibleTree } from './listing.js';
import { type StatSnapshot, statJson, takeStatSnapshot } from './stat.js';
import {
  compareRaw,
  DEFAULT_FILE_LIMIT,
  gitBuffer,
  gitBufferAsync,
  gitStatePaths,
  identify,
  insideTally,
  nulList,
  objectFormat,
  pathOut,
  snapshotJson,
  snapshotTree,
  type TreeSnapshot,
} from './workspace.js';

/** What `session.start` records in `extensions["dev.tally.workspace"].baseline`. */
export interface Baseline {
  commit?: string;
  /** repo-relative POSIX path → "sha256:<hex>" of the content, or null when the file is deleted. */
  dirty: Record<string, string | null>;
  /** The same for paths that are not UTF-8: base64 of the path's bytes → digest or null. */
  dirty_b64?: Record<string, string | null>;
  /**
   * git's own config, hooks and info files (`.git/config`, `.git/hooks/…`, `.git/info/…`) → the
   * digest of each at the start, compared at the close like a project file.
   */
  git_state?: Record<string, string>;
  /** Outside git: the tree snapshot the close compares with (its file is beside the session). */
  tree?: KeptSnapshot;
  /** In git: the stat snapshot the close compares with (its file is beside the session). */
  stat?: KeptSnapshot;
  /** Dirty files past the limit, not recorded (the close cannot tell their changes apart). */
  skipped?: number;
  limit?: number;
}

/** A snapshot kept beside the session: the digest of its file, and how many files it holds. */
export interface KeptSnapshot {
  digest: string;
  files: number;
  skipped: number;
  limit: number;
}

export interface CapturedBaseline {
  baseline: Baseline;
  /** Outside git: the snapshot, to keep beside the session as `snapshotBytes`. */
  snapshot?: TreeSnapshot;
  snapshotBytes?: string;
  /** In git: the stat snapshot, to keep beside the session as `statBytes`. */
  stat?: StatSnapshot;
  statBytes?: string;
}

/** Whether `root` is the top of a git work tree with git available. */
export function isGitRoot(root: string): boolean {
  try {
    return gitBuffer(root, ['rev-parse', '--is-inside-work-tree']).toString('utf8').trim() === 'true';
  } catch {
    return false;
  }
}

/** HEAD's commit id, or undefined in a repository without commits. */
export function headOf(root: string): string | undefined {
  try {
    const out = gitBuffer(root, ['rev-parse', '--verify', '--quiet', 'HEAD']).toString('utf8').trim();
    return out === '' ? undefined : out;
  } catch {
    return undefined;
  }
}

/** The index at the start, read once (before the agent runs, so trusted as the start's). */
interface StartIndex {
  tracked: string[];
  /**
   * Paths whose entry tells git not to look at the working file — assume-unchanged (a lower-case
   * tag in `ls-files -v`) or skip-worktree (`S`, `s`) — so that `git diff` and `git status` pass
   * over them whatever the file holds.
   */
  unwatched: string[];
  /**
   * Each entry's blob id: a file git finds clean holds what its entry names, which is also its blob
   * in HEAD (one that differs from HEAD is dirty, and its digest is kept instead).
   */
  blobs: Map<string, string>;
}

/** The index from `git ls-files -z -s -v`: `<tag> <mode> <id> <stage>\t<path>` per entry. */
function indexOf(listing: Buffer): StartIndex {
  const index: StartIndex = { tracked: [], unwatched: [], blobs: new Map() };
  for (const entry of nulList(listing)) {
    const tab = entry.indexOf('\t');
    const [tag, mode, id, stage] = entry.slice(0, tab).split(' ');
    if (tab < 0 || tag === undefined || id === undefined) continue;
    const raw = entry.slice(tab + 1);
    index.tracked.push(raw);
    if (tag === 'S' || /^[a-z]$/.test(tag)) index.unwatched.push(raw);
    if (stage === '0' && mode !== '160000') index.blobs.set(raw, id);
  }
  return index;
}

/** What `git status` says differs from HEAD (untracked files left out). */
const STATUS_ARGS = [
  'status',
  '--porcelain=v1',
  '-z',
  '--untracked-files=no',
  '--no-renames',
  '--ignore-submodules=all',
];

/**
 * Raw paths whose start content the baseline keeps, `.tally/` left out, in byte order: what differs
 * from HEAD (`status`), what is untracked (what the listing shows that the index does not hold), and what git
 * is told not to look at (the close looks at these itself).
 */
function dirtyPaths(status: Buffer, visible: VisibleTree, index: StartIndex): string[] {
  const changed = nulList(status)
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
  const tracked = new Set(index.tracked);
  const untracked = visible.files.filter((raw) => !tracked.has(raw));
  return [...new Set([...changed, ...untracked, ...index.unwatched])]
    .filter((path) => !insideTally(path))
    .sort(compareRaw);
}

export async function captureBaseline(root: string, limit = DEFAULT_FILE_LIMIT): Promise<CapturedBaseline> {
  if (!isGitRoot(root)) {
    const snapshot = snapshotTree(root, false, limit);
    const snapshotBytes = `${canonicalize(snapshotJson(snapshot))}\n`;
    return {
      baseline: {
        dirty: {},
        tree: { digest: digest(snapshotBytes), files: snapshot.files.size, skipped: snapshot.skipped, limit },
      },
      snapshot,
      snapshotBytes,
    };
  }
  const baseline: Baseline = { dirty: {} };
  const head = headOf(root);
  if (head) baseline.commit = head;
  const format = objectFormat(root);
  const [visible, listing] = await Promise.all([
    listVisible(root),
    gitBufferAsync(root, ['ls-files', '-z', '-s', '-v']),
  ]);
  const index = indexOf(listing);
  const all = [...new Set([...visible.files, ...index.tracked])]
    .filter((raw) => !insideTally(raw))
    .sort(compareRaw);
  // From here on a write to any file gives it a ctime the snapshot calls too recent to vouch for
  // its content, so git may look for dirty files while Tally takes the stats.
  const since = Date.now();
  const status = gitBufferAsync(root, STATUS_ARGS);
  status.catch(() => undefined); // awaited below; a failure is thrown there
  const stat = takeStatSnapshot(root, all, visible.nested, index.blobs, limit, since);
  const statBytes = `${JSON.stringify(statJson(stat))}\n`;
  baseline.stat = { digest: digest(statBytes), files: stat.files.size, skipped: stat.skipped, limit };
  const paths = dirtyPaths(await status, visible, index);
  // git's own config, hooks and info files: always kept (a few files, not counted in the limit).
  for (const raw of gitStatePaths(root)) {
    const id = identify(root, raw, format);
    const out = pathOut(raw);
    if (id === null || out.path_b64 !== undefined) continue;
    baseline.git_state ??= {};
    baseline.git_state[out.path] = id.sha256;
  }
  for (const raw of paths.slice(0, limit)) {
    const id = identify(root, raw, format);
    const out = pathOut(raw);
    if (out.path_b64 === undefined) baseline.dirty[out.path] = id?.sha256 ?? null;
    else {
      baseline.dirty_b64 ??= {};
      baseline.dirty_b64[out.path_b64] = id?.sha256 ?? null;
    }
  }
  if (paths.length > limit) {
    baseline.skipped = paths.length - limit;
    baseline.limit = limit;
  }
  return { baseline, stat, statBytes };
}
