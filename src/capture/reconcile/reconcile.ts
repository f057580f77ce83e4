/**
 * The working tree at close against the baseline of the start: every path whose content (or
 * existence) differs, with its net operation. In git every file of the start's stat snapshot and
 * every file the tree holds now is a candidate, and those whose stat differs from the snapshot's
 * are compared by content with the start (the repository's index and objects are not trusted to
 * say which changed); outside git, the two tree snapshots (./trees.ts). Order is byte order of the
 * paths; at most `limit` paths are compared and the rest are counted.
 */
import { CONFIG_PLACES, type ConfigPlaces, configPlaces } from '../../core/git.js';
import type { Baseline } from './baseline.js';
import {
  byPath,
  type Differing,
  pairRenames,
  type Start,
  same,
  type WorkspaceChange,
  type WorkspaceDiff,
} from './changes.js';
import { identify, isUnread, LeadingFolders, type Unreadable } from './content.js';
import { type Deadline, deadlineAfter } from './deadline.js';
import { ReconcileError } from './error.js';
import { headOf, nulList, repositoryOf, runGit, treeBlobs } from './git.js';
import {
  gitStatePaths,
  identifyGitState,
  isGitState,
  repositoriesAtClose,
  repositoryOfPath,
  SETTINGS,
} from './git-state.js';
import { locateHooks } from './hooks-path.js';
import { listProject } from './listing.js';
import { compareRaw, rawOfText, rawPath, underAny, writtenByTally } from './paths.js';
import { readSettings } from './settings.js';
import { type StatSnapshot, sameStat, statOf } from './stat.js';
import { diffTrees } from './trees.js';
import { DEFAULT_FILE_LIMIT, plainPath, type TreeSnapshot } from './workspace.js';

export type { NetOperation, WorkspaceChange, WorkspaceDiff } from './changes.js';

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

/** The first dirty path the baseline did not record, raw, when it cut any. */
function cutOf(baseline: Baseline): string | undefined {
  if (typeof baseline.cut_from_b64 === 'string') return rawPath(Buffer.from(baseline.cut_from_b64, 'base64'));
  return typeof baseline.cut_from === 'string' ? rawOfText(baseline.cut_from) : undefined;
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
  /** How long the pass's git commands may take together (default `DEFAULT_GIT_TIMEOUT_MS`). */
  timeoutMs?: number;
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
  const deadline = deadlineAfter(options.timeoutMs);
  if (baseline.error !== undefined)
    throw new ReconcileError('baseline', `the start recorded no baseline: ${baseline.error.message}`, {
      start: baseline.error,
    });
  if (baseline.tree !== undefined) return diffTrees(root, options.startTree, limit, deadline);
  return diffGit(root, baseline, options.startStat, limit, deadline);
}

/**
 * Which paths the close compares by content, in byte order: every candidate — a file of the start
 * snapshot, a file the tree shows now (Tally's own listing, nested repositories included), a path
 * the index names now, a file dirty at the start — but one whose stat is as the snapshot recorded
 * it (its ctime vouches for its content) or that is absent at both ends. `recent`: files whose stat
 * could not vouch at the start.
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
  const folders = new LeadingFolders(root);
  const unlisted = new Set(stat?.unlisted ?? []);
  for (const raw of [...candidates].sort(compareRaw)) {
    if (writtenByTally(raw) || isGitState(raw)) continue;
    // Past the snapshot's bound, or in a nested repository the start did not list and not in the
    // snapshot, nothing is known of the start: not compared, counted.
    if ((stat?.last !== undefined && raw > stat.last) || (underAny(raw, unlisted) && !stat?.files.has(raw))) {
      beyond++;
      continue;
    }
    const entry = stat?.files.get(raw);
    const now = statOf(root, raw, folders);
    if (entry?.stat && now && sameStat(entry.stat, now)) continue;
    if (now === undefined && startOf(raw) === null) continue;
    if (entry !== undefined && entry.stat === null) recent.push(raw);
    else changed.push(raw);
  }
  return { recent, changed, beyond };
}

/**
 * A `.git` that appeared (a folder made a repository, or hiding what it holds) or went, up to
 * `last`; one under a folder that cannot be read now is not known to have gone.
 */
function markerChanges(
  start: readonly string[],
  now: readonly string[],
  unreadable: readonly Unreadable[],
  last?: string,
): WorkspaceChange[] {
  const within = (raw: string) => last === undefined || raw <= last;
  const hidden = (raw: string) =>
    unreadable.some((u) => u.folder && (u.raw === '' || raw.startsWith(`${u.raw}/`)));
  const was = new Set(start);
  const is = new Set(now);
  return [
    ...now
      .filter((raw) => !was.has(raw) && within(raw))
      .map((raw) => ({ raw, operation: 'created' as const })),
    ...start
      .filter((raw) => !is.has(raw) && within(raw) && !hidden(raw))
      .map((raw) => ({ raw, operation: 'deleted' as const })),
  ];
}

/**
 * The config places the start recorded; this process's own for a start an earlier version took.
 * Each is a variable's value, as the start saw it: anything else is a baseline Tally did not write.
 */
function placesOf(baseline: Baseline): ConfigPlaces {
  const recorded: unknown = baseline.config_places;
  if (recorded === undefined) return configPlaces();
  const known = new Set<string>(CONFIG_PLACES);
  if (
    recorded === null ||
    typeof recorded !== 'object' ||
    Array.isArray(recorded) ||
    Object.entries(recorded).some(([name, value]) => !known.has(name) || typeof value !== 'string')
  )
    throw new ReconcileError(
      'baseline',
      `the start's config_places is not a map of ${CONFIG_PLACES.join(', ')} to their values`,
      { field: 'config_places' },
    );
  return recorded as ConfigPlaces;
}

async function diffGit(
  root: string,
  baseline: Baseline,
  stat: StatSnapshot | undefined,
  limit: number,
  deadline: Deadline,
): Promise<WorkspaceDiff> {
  const repository = await repositoryOf(root, deadline);
  if (repository === null)
    throw new ReconcileError('git', `${root} is no longer a git work tree (or git is missing)`, { root });
  const { format } = repository;
  const dirty = dirtyMap(baseline);
  const cutFrom = cutOf(baseline);
  const start = baseline.commit;
  const blobs =
    stat === undefined && start !== undefined
      ? await treeBlobs(root, start, deadline)
      : new Map<string, string>();
  const startOf = (raw: string): Start | null => {
    if (dirty.has(raw)) {
      const value = dirty.get(raw);
      return value === null || value === undefined ? null : { sha256: value };
    }
    // Past the start's cut a file may have been dirty: present, its content not known.
    const present = stat === undefined ? blobs.has(raw) : stat.files.has(raw);
    if (present && cutFrom !== undefined && compareRaw(raw, cutFrom) >= 0) return {};
    const blob = stat === undefined ? blobs.get(raw) : stat.files.get(raw)?.blob;
    if (blob !== undefined) return { blob };
    return stat?.files.has(raw) ? {} : null;
  };
  // What the index names is a candidate too, never the only source: it is the agent's to write.
  const [tree, indexed] = await Promise.all([
    listProject(root, deadline),
    runGit(root, ['ls-files', '-z', '--cached'], deadline),
  ]);
  const candidates = new Set([...tree.files, ...dirty.keys(), ...(stat?.files.keys() ?? blobs.keys())]);
  for (const raw of nulList(indexed.stdout)) if (plainPath(raw)) candidates.add(raw);
  // A snapshot an earlier version took left the files of nested repositories out: so does the close.
  if (stat !== undefined && stat.markers === undefined)
    for (const raw of candidates)
      if ([...stat.nested].some((folder) => raw.startsWith(`${folder}/`))) candidates.delete(raw);
  const last = stat?.last;
  // A nested repository not listed now: one the start did not list either is the start's own bound,
  // and so is one past the snapshot's `last` (nothing after it is compared); one the start listed
  // before it, the session pushed out.
  const startUnlisted = new Set(stat?.unlisted ?? []);
  const unlisted = tree.unlisted.filter(
    (folder) => !startUnlisted.has(folder) && (last === undefined || folder < last),
  ).length;
  const { recent, changed, beyond } = toCompare(root, stat, startOf, candidates);
  const skippedSession = unlisted + Math.max(0, changed.length - limit);
  // git's own config, hooks and info files, where the start found them: always compared (a few
  // files each, not counted in the limit).
  const repositories = repositoriesAtClose(root, baseline.git_dirs, deadline);
  // A start by an earlier version recorded no settings (the top's are always there) and nothing of
  // submodules' git directories under `modules/`: neither is compared.
  const current = baseline.git_state?.[`.git/${SETTINGS}`] !== undefined;
  // Read from the files the start's git read them from, whichever process closes.
  const places = placesOf(baseline);
  const [untold] = await Promise.all([
    locateHooks(root, repositories, deadline, places),
    // A start that recorded no config places (an earlier version) followed no file git does not
    // read: neither does its close.
    current
      ? readSettings(root, repositories, format, deadline, places, baseline.config_places !== undefined)
      : undefined,
  ]);
  const state = gitStatePaths(root, repositories, format, current);
  const recorded = [...dirty.keys()].filter(
    (raw) => isGitState(raw) && repositoryOfPath(repositories, raw) !== undefined,
  );
  const watched = new Set([...state.paths, ...recorded]);
  const looked = [...recent, ...changed.slice(0, limit), ...watched].sort(compareRaw);
  const unreadable: Unreadable[] = [...tree.unreadable, ...state.unreadable, ...untold];
  // Before the contents are read: past the deadline a file is left unread, but git is stopped.
  const end = await headOf(root, deadline);
  const differing: Differing[] = [];
  const folders = new LeadingFolders(root);
  for (const raw of looked) {
    const before = startOf(raw);
    const found = watched.has(raw)
      ? identifyGitState(root, repositories, raw, format, deadline.at)
      : { content: identify(root, raw, format, folders, deadline.at) };
    const end = found.content;
    if (isUnread(end)) unreadable.push({ raw, code: end.unreadable });
    if (!same(before, end))
      differing.push({ raw, start: before, end, ...(found.location ? { location: found.location } : {}) });
  }
  const markers =
    stat?.markers === undefined ? [] : markerChanges(stat.markers, tree.markers, tree.unreadable, last);
  const commit: WorkspaceDiff['commit'] = {};
  if (start !== undefined) commit.start = start;
  if (end !== undefined) commit.end = end;
  return {
    mode: 'git',
    changes: [...pairRenames(differing), ...markers].sort(byPath),
    skipped: beyond + (tree.unlisted.length - unlisted) + skippedSession,
    skippedSession,
    unreadable: unreadable.sort(byPath),
    limit,
    commit,
  };
}
