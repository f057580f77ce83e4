/**
 * The start-of-session baseline. In a git repository: HEAD, the content digest of every file
 * already dirty or untracked (`.gitignore` respected), so the close blames the session only for
 * what changed after it, and Tally's own stat snapshot of every file with its blob in HEAD, so the
 * close need not ask the repository's index or objects which files changed. Outside git: a
 * snapshot of every file's content hash. A snapshot is kept beside the session, its digest in the
 * signed start record.
 */
import { canonicalize } from '../../core/canonical.js';
import { type ConfigPlaces, configPlaces } from '../../core/git.js';
import { digest } from '../../core/hash.js';
import { BASELINE_MAP_BYTES, ByteBudget, memberBytes } from '../../core/json-budget.js';
import { identify, isUnread, LeadingFolders } from './content.js';
import { type Deadline, deadlineAfter } from './deadline.js';
import { ReconcileError } from './error.js';
import { headOf, nulList, repositoryOf, runGit } from './git.js';
import {
  type GitDirs,
  type GitRepository,
  gitStatePaths,
  identifyGitState,
  NESTED_WATCHED,
  repositoriesAtStart,
} from './git-state.js';
import { locateHooks } from './hooks-path.js';
import { isUtf8, listProject, type ProjectTree } from './listing.js';
import { compareRaw, pathOut, writtenByTally } from './paths.js';
import { readSettings } from './settings.js';
import { type StatSnapshot, statJson, takeStatSnapshot } from './stat.js';
import { DEFAULT_FILE_LIMIT, snapshotJson, snapshotTree, type TreeSnapshot } from './workspace.js';

/** What `session.start` records in `extensions["dev.tally.workspace"].baseline`. */
export interface Baseline {
  commit?: string;
  /** repo-relative POSIX path → "sha256:<hex>" of the content, or null when the file is deleted. */
  dirty: Record<string, string | null>;
  /** The same for paths that are not UTF-8: base64 of the path's bytes → digest or null. */
  dirty_b64?: Record<string, string | null>;
  /**
   * git's own files (`.git/config`, `.git/hooks/…`, `.git/info/…`, the settings in effect beyond
   * them `.git/config-in-effect`, and those of each nested repository found: `sub/b/.git/config`,
   * …; a `.git` that is a file) → the digest of each at the start, compared at the close like a
   * project file.
   */
  git_state?: Record<string, string>;
  /**
   * Where git keeps them, by the `.git` they stand for: each nested repository found, and the
   * top's when its `.git` is a file (a linked worktree, a submodule). The close reads these places.
   * First in the record's share: a repository whose places do not fit is left out, its files
   * counted in `git_state_cut`.
   */
  git_dirs?: Record<string, GitDirs>;
  /**
   * In git: where the start's git found the user's and the system's config (`HOME`,
   * `XDG_CONFIG_HOME`, `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`, those set).
   * The close reads the settings it compares from the same files, whichever process closes.
   */
  config_places?: ConfigPlaces;
  /** Outside git: the tree snapshot the close compares with (its file is beside the session). */
  tree?: KeptSnapshot;
  /** In git: the stat snapshot the close compares with (its file is beside the session). */
  stat?: KeptSnapshot;
  /**
   * Dirty files (and git's own files) not recorded: past the limit, or past the record's share
   * (`map_bytes`); where they start is `cut_from` and `git_state_cut`.
   */
  skipped?: number;
  limit?: number;
  /** The bytes the recorded maps may take together, when they took them all (core/json-budget). */
  map_bytes?: number;
  /**
   * The first dirty path not recorded (byte order; `cut_from_b64` its bytes when not UTF-8): from
   * it on, a file whose stat changed is compared with a start whose content is not known.
   */
  cut_from?: string;
  cut_from_b64?: string;
  /**
   * git's own files not recorded (past the share, or of a repository whose places did not fit): the
   * close cannot compare them, and says so.
   */
  git_state_cut?: number;
  /**
   * The start could not take the baseline (a git command timed out, an entry of `.git` git reads
   * is not a regular file): the close compares nothing and says why; verification fails.
   */
  error?: { code: string; message: string };
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

/** A recorded digest as its map spells it, the longest value a member of those maps has. */
const DIGEST_SPELLED = `sha256:${'0'.repeat(64)}`;

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
 * Raw paths whose start content the baseline keeps, what Tally writes under `.tally/` left out, in
 * byte order: what differs from HEAD (`status`), what is untracked (what the listing shows that the
 * index does not hold), and what git is told not to look at (the close looks at these itself).
 */
function dirtyPaths(status: Buffer, tree: ProjectTree, index: StartIndex): string[] {
  const changed = nulList(status)
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
  const tracked = new Set(index.tracked);
  const untracked = tree.files.filter((raw) => !tracked.has(raw));
  return [...new Set([...changed, ...untracked, ...index.unwatched])]
    .filter((path) => !writtenByTally(path))
    .sort(compareRaw);
}

/**
 * The baseline of the tree at `root`, before the agent runs. One that cannot be taken (a git
 * command past the deadline, a FIFO where git reads a file) is recorded as an error, so the session
 * still starts and its close says that nothing could be compared.
 */
export async function captureBaseline(
  root: string,
  limit = DEFAULT_FILE_LIMIT,
  options: { timeoutMs?: number } = {},
): Promise<CapturedBaseline> {
  const deadline = deadlineAfter(options.timeoutMs);
  try {
    const repository = await repositoryOf(root, deadline);
    if (repository === null) return await treeBaseline(root, limit, deadline);
    return await gitBaseline(root, limit, repository.format, deadline);
  } catch (error) {
    if (!(error instanceof ReconcileError) || error.code === 'bad-option') throw error;
    return { baseline: { dirty: {}, error: { code: error.code, message: error.message } } };
  }
}

async function treeBaseline(root: string, limit: number, deadline: Deadline): Promise<CapturedBaseline> {
  const snapshot = await snapshotTree(root, false, limit, { deadline });
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

async function gitBaseline(
  root: string,
  limit: number,
  format: 'sha1' | 'sha256',
  deadline: Deadline,
): Promise<CapturedBaseline> {
  const baseline: Baseline = { dirty: {} };
  const head = await headOf(root, deadline);
  if (head) baseline.commit = head;
  const [tree, listing] = await Promise.all([
    listProject(root, deadline),
    runGit(root, ['ls-files', '-z', '-s', '-v'], deadline),
  ]);
  const index = indexOf(listing.stdout);
  const all = [...new Set([...tree.files, ...index.tracked])]
    .filter((raw) => !writtenByTally(raw))
    .sort(compareRaw);
  // From here on a write to any file gives it a ctime the snapshot calls too recent to vouch for
  // its content, so git may look for dirty files while Tally takes the stats.
  const since = Date.now();
  const status = runGit(root, STATUS_ARGS, deadline);
  status.catch(() => undefined); // awaited below; a failure is thrown there
  const stat = takeStatSnapshot(
    root,
    all,
    { nested: tree.nested, markers: tree.markers, unlisted: tree.unlisted },
    index.blobs,
    limit,
    since,
  );
  const statBytes = `${JSON.stringify(statJson(stat))}\n`;
  baseline.stat = { digest: digest(statBytes), files: stat.files.size, skipped: stat.skipped, limit };
  const paths = dirtyPaths((await status).stdout, tree, index);
  // git's own config, hooks and info files, of the top's repository and of the first
  // `NESTED_WATCHED` nested ones, listed or past the listing's bound (their hooks run all the
  // same): always kept (a few files each, not counted in the limit), first in the record's share.
  // One whose name is not UTF-8 cannot be given to git as a work tree; it and those past them are
  // left to the start's bound (they are not listed either: counted).
  const budget = new ByteBudget(BASELINE_MAP_BYTES);
  let gitCut = 0;
  const found = repositoriesAtStart(root, tree.nested.filter(isUtf8).slice(0, NESTED_WATCHED), deadline);
  // Where each repository keeps its own files comes first (they are read there): a `.git` file and
  // a `commondir` hold 64 KiB each, of names the agent chose. A repository whose places do not fit
  // is not watched, and its files count as cut.
  const repositories: GitRepository[] = [];
  for (const repository of found.repositories) {
    const places = found.git_dirs?.[repository.marker];
    if (places !== undefined && !budget.take(memberBytes(repository.marker, places))) {
      gitCut += Math.max(1, gitStatePaths(root, [repository], format).paths.length);
      continue;
    }
    if (places !== undefined) {
      baseline.git_dirs ??= {};
      baseline.git_dirs[repository.marker] = places;
    }
    repositories.push(repository);
  }
  // Two questions to git a repository, neither waiting on the other (each sets its own field).
  const places = configPlaces();
  baseline.config_places = places;
  await Promise.all([
    locateHooks(root, repositories, deadline, places),
    readSettings(root, repositories, format, deadline, places),
  ]);
  for (const raw of gitStatePaths(root, repositories, format).paths) {
    const out = pathOut(raw);
    if (out.path_b64 !== undefined) continue;
    if (!budget.take(memberBytes(out.path, DIGEST_SPELLED))) {
      gitCut++;
      continue;
    }
    const id = identifyGitState(root, repositories, raw, format, deadline.at).content;
    if (id === null || isUnread(id)) continue;
    baseline.git_state ??= {};
    baseline.git_state[out.path] = id.sha256;
  }
  // A dirty file that cannot be read is left out: the stat snapshot has it, as present with its
  // content unknown, so the close compares it only if its stat changes. So are those from the first
  // one past the limit or the record's share on (`cut_from`): their start content is not known.
  const folders = new LeadingFolders(root);
  let cut = Math.max(0, paths.length - limit);
  let firstCut: string | undefined;
  for (const raw of paths.slice(0, limit)) {
    const out = pathOut(raw);
    if (!budget.take(memberBytes(out.path_b64 ?? out.path, DIGEST_SPELLED))) {
      firstCut ??= raw;
      cut++;
      continue;
    }
    const id = identify(root, raw, format, folders, deadline.at);
    if (isUnread(id)) continue;
    if (out.path_b64 === undefined) baseline.dirty[out.path] = id?.sha256 ?? null;
    else {
      baseline.dirty_b64 ??= {};
      baseline.dirty_b64[out.path_b64] = id?.sha256 ?? null;
    }
  }
  if (cut > 0 || gitCut > 0) {
    baseline.skipped = cut + gitCut;
    baseline.limit = limit;
  }
  // The paths are in byte order: one the share cut comes before any past the limit.
  const cutFrom = firstCut ?? paths[limit];
  if (cutFrom !== undefined) {
    const out = pathOut(cutFrom);
    baseline.cut_from = out.path;
    if (out.path_b64 !== undefined) baseline.cut_from_b64 = out.path_b64;
  }
  if (gitCut > 0) baseline.git_state_cut = gitCut;
  if (budget.full) baseline.map_bytes = BASELINE_MAP_BYTES;
  return { baseline, stat, statBytes };
}
