/**
 * git's own files that decide what runs or what git shows, watched like project files: a
 * repository's config (hooks path, filters, fsmonitor), its hooks (run by the user's next commit)
 * and `info/` (exclude, attributes) — of the tree's own repository and of each repository nested
 * in it that the listing finds, whether it lists its files or not. Each is named as the work tree sees it (`.git/hooks/pre-commit`,
 * `sub/b/.git/config`) wherever git keeps it: a linked worktree's config, hooks and info are its
 * main repository's (the `commondir` its git directory names), a submodule's lie under the
 * superproject's `.git/modules/`, a `.git` that is a link leads to them. A submodule no `.git` in
 * the tree leads to (deinit'd) keeps its own under the `modules/` of its superproject's git
 * directory all the same: they are watched there, named by their path under it
 * (`.git/modules/lib/hooks/post-checkout`; git-walk.ts). Where they lie is resolved
 * at the start and recorded, and the close compares those places: a `.git` file rewritten or a
 * `.git` link retargeted during the session redirects nothing the close reads, and is itself one
 * of the watched files. The places are raw paths (git takes any bytes), recorded as paths are, as
 * git puts them together before it resolves them (`<git dir>/../..` for a `commondir` of `../..`);
 * each pass reads them where git's resolution leads then (real-path.ts): links followed as they are
 * then, a `..` after a link going up from where the link leads.
 */
import { lstatSync, readlinkSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { eachAtOnce } from '../../core/at-once.js';
import { type Content, type FileIdentity, identifyAt, type Unreadable } from './content.js';
import type { Deadline } from './deadline.js';
import { ReconcileError } from './error.js';
import { commonDirOf, GIT_AT_ONCE, namedGitDir, placeNow, runGit } from './git.js';
import { DIR_FILES, folderIdentity, GitStateWalk, type Role, STATE_FILES, under } from './git-walk.js';
import { compareRaw, nativePath, pathOut, rawOfText, rawPath } from './paths.js';

/** Where git keeps a repository's own files, as the baseline records it (`git_dirs`). */
export interface GitDirs {
  /** Its git directory: the `.git` folder, or the folder a `.git` file or link names (`config.worktree`, `commondir`). */
  dir: string;
  /**
   * Where its config, hooks and info lie: the git directory and the `commondir` it names, joined as
   * git joins them (`dir` + `/` + a relative one), else the git directory.
   */
  common: string;
  /** The bytes of `dir`, base64, when they are not UTF-8 (`dir` then has U+FFFD for the bad ones). */
  dir_b64?: string;
  /** The same for `common`. */
  common_b64?: string;
}

/** The same places as raw paths (latin1 strings of their bytes), absolute. */
interface Places {
  dir: string;
  common: string;
}

/**
 * A repository whose own files are watched: `marker` is the raw path of its `.git` in the tree,
 * `dirs` its places as recorded, `at` where they are now, read there.
 */
export interface GitRepository {
  marker: string;
  dirs: Places;
  at: Places;
  /**
   * The folder git runs its hooks from, as git says this pass (hooks-path.ts), when it is not
   * `hooks` in the common directory (`core.hooksPath`): watched as `<marker>/hooks-path`, beside
   * the common directory's `hooks`, which git runs again once the setting goes.
   */
  hooks?: string;
  /**
   * The settings git runs it with beyond its own config files, as git lists them this pass
   * (settings.ts): watched as `<marker>/config-in-effect`; none when git would not run in it.
   */
  settings?: FileIdentity;
}

/** The files git reads from the git directory itself, not from the common one. */
const OWN_FILES = new Set(DIR_FILES);

/**
 * Nested repositories whose own files a start watches at most, in the listing's order (the first
 * `NESTED_LISTED` of them listed, the rest not): each costs every pass two git processes (its hooks
 * folder, its settings) and a walk of its hooks and info, a few dozen of `GIT_STATE_ENTRIES`. Those
 * past it are the start's bound, as what they hold is.
 */
export const NESTED_WATCHED = 300;

/** The folder of a git directory (not of the common one) holding its submodules' git directories. */
const MODULES = 'modules';

export function worktreeOf(root: string, marker: string): string {
  const folder = marker.slice(0, -'/.git'.length);
  return folder === '' ? root : nativePath(root, folder).toString('utf8');
}

/**
 * Runs the same git command in the work tree of each repository (in `env`), `GIT_AT_ONCE` at a
 * time, and hands each answer to `answer`. A repository git will not run in (its `.git` names no
 * repository, its config does not parse) gives none. A pass past its deadline stops here, as at
 * any git command.
 */
export async function askEach(
  root: string,
  repositories: readonly GitRepository[],
  args: readonly string[],
  deadline: Deadline,
  env: NodeJS.ProcessEnv,
  answer: (repository: GitRepository, out: Buffer, worktree: string) => void | Promise<void>,
): Promise<void> {
  await eachAtOnce(repositories, GIT_AT_ONCE, async (repository) => {
    const worktree = worktreeOf(root, repository.marker);
    let out: Buffer;
    try {
      out = (await runGit(worktree, args, deadline, env)).stdout;
    } catch (error) {
      if (error instanceof ReconcileError && error.code === 'git') return;
      throw error;
    }
    await answer(repository, out, worktree);
  });
}

/**
 * Where a `.git` link leads, one step: the place it names is pinned, never tidied by its text (a
 * `..` after a link goes up from where that link leads, as git and the kernel take it). Links past
 * it are followed at the close as git follows them on every command: pinned to where they led at
 * the start, one outside the tree retargeted would move git's hooks and no row would say so.
 */
function linkPlace(dot: string): string {
  const target = rawPath(readlinkSync(dot, { encoding: 'buffer' }));
  return isAbsolute(target) ? target : `${rawOfText(dirname(dot))}/${target}`;
}

/**
 * Where git keeps the own files of the repository whose `.git` is `marker`, or null when there is
 * none. A `.git` link (git follows it) is pinned to the place it names at the start.
 */
function gitDirsOf(root: string, marker: string): Places | null {
  const worktree = worktreeOf(root, marker);
  const dot = join(worktree, '.git');
  let dir: string | undefined;
  try {
    const stat = statSync(dot, { throwIfNoEntry: false });
    if (stat === undefined) return null;
    if (!stat.isDirectory()) dir = namedGitDir(worktree);
    else if (lstatSync(dot).isSymbolicLink()) dir = linkPlace(dot);
    else dir = rawOfText(dot);
  } catch (error) {
    // A `.git` file too large to read says where git keeps the files, to git alone: the start fails.
    if (error instanceof ReconcileError) throw error;
    return null;
  }
  if (dir === undefined) return null;
  return { dir, common: commonDirOf(dir) ?? dir };
}

/** The top's own files where the top's `.git` folder holds them. */
function plainDirs(root: string): Places {
  const dot = rawOfText(join(root, '.git'));
  return { dir: dot, common: dot };
}

function isPlain(root: string, dirs: Places): boolean {
  const dot = rawOfText(join(root, '.git'));
  return dirs.dir === dot && dirs.common === dot;
}

/**
 * The repository at `marker` with its places as they are now: the top's `.git` folder where it is,
 * a place `git_dirs` records where git's resolution of it leads (else as recorded: git stops there),
 * resolved within the pass's deadline.
 */
function repositoryAt(root: string, marker: string, dirs: Places, deadline: Deadline): GitRepository {
  if (marker === '.git' && isPlain(root, dirs)) return { marker, dirs, at: dirs };
  const at = { dir: placeNow(dirs.dir, deadline), common: placeNow(dirs.common, deadline) };
  return { marker, dirs, at };
}

/** Places as the baseline records them. */
function recorded(dirs: Places): GitDirs {
  const dir = pathOut(dirs.dir);
  const common = pathOut(dirs.common);
  return {
    dir: dir.path,
    common: common.path,
    ...(dir.path_b64 === undefined ? {} : { dir_b64: dir.path_b64 }),
    ...(common.path_b64 === undefined ? {} : { common_b64: common.path_b64 }),
  };
}

/** A recorded place as a raw path: its bytes when recorded, else its text. */
function rawPlace(text: unknown, b64: unknown): string | undefined {
  if (typeof b64 === 'string') return rawPath(Buffer.from(b64, 'base64'));
  return typeof text === 'string' ? rawOfText(text) : undefined;
}

/**
 * The repositories whose own files the start records: the top's, and each nested one in `nested`
 * (their folders: every one the listing found, listed or past its bound). `git_dirs` is what the baseline keeps of where they lie: every
 * nested one, and the top's when its `.git` is not a folder holding them.
 */
export function repositoriesAtStart(
  root: string,
  nested: readonly string[],
  deadline: Deadline,
): { repositories: GitRepository[]; git_dirs?: Record<string, GitDirs> } {
  const top = gitDirsOf(root, '.git') ?? plainDirs(root);
  const repositories: GitRepository[] = [repositoryAt(root, '.git', top, deadline)];
  for (const folder of nested) {
    const dirs = gitDirsOf(root, `${folder}/.git`);
    if (dirs !== null) repositories.push(repositoryAt(root, `${folder}/.git`, dirs, deadline));
  }
  const kept = repositories.filter((r) => r.marker !== '.git' || !isPlain(root, r.dirs));
  if (kept.length === 0) return { repositories };
  return { repositories, git_dirs: Object.fromEntries(kept.map((r) => [r.marker, recorded(r.dirs)])) };
}

/**
 * The repositories whose own files the close compares: where the start found them (`recorded`, the
 * baseline's `git_dirs`; the top's `.git` folder when it names none), a nested one only while its
 * `.git` is still there (one that went is a row of its own, as is one that appeared).
 */
export function repositoriesAtClose(root: string, recorded: unknown, deadline: Deadline): GitRepository[] {
  const places =
    typeof recorded === 'object' && recorded !== null ? (recorded as Record<string, unknown>) : {};
  const repositories: GitRepository[] = [];
  for (const [marker, value] of Object.entries(places)) {
    const dirs = value as Partial<GitDirs> | null;
    const dir = rawPlace(dirs?.dir, dirs?.dir_b64);
    const common = rawPlace(dirs?.common, dirs?.common_b64);
    if (dir === undefined || common === undefined) continue;
    if (!isAbsolute(dir) || !isAbsolute(common) || !isMarker(marker)) continue;
    if (marker !== '.git' && !present(nativePath(root, marker))) continue;
    repositories.push(repositoryAt(root, marker, { dir, common }, deadline));
  }
  if (!repositories.some((r) => r.marker === '.git'))
    repositories.push(repositoryAt(root, '.git', plainDirs(root), deadline));
  return repositories;
}

/** `.git`, or `<folder>/.git` with a relative folder of plain segments (no `.`, `..` or empty one). */
function isMarker(raw: string): boolean {
  if (raw === '.git') return true;
  const segments = raw.split('/');
  return (
    segments.length > 1 &&
    segments[segments.length - 1] === '.git' &&
    segments.every((s) => s !== '' && s !== '.' && s !== '..')
  );
}

/** Whether a raw path is one of git's own files of a repository in the tree (a `.git` or under one). */
export function isGitState(raw: string): boolean {
  return raw === '.git' || raw.startsWith('.git/') || raw.endsWith('/.git') || raw.includes('/.git/');
}

function present(path: Buffer | string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** The repository a watched raw path belongs to (markers never nest in one another's names). */
export function repositoryOfPath(
  repositories: readonly GitRepository[],
  raw: string,
): GitRepository | undefined {
  return repositories.find((r) => raw === r.marker || raw.startsWith(`${r.marker}/`));
}

/**
 * Where git keeps a watched raw path. A `.git` file or link is read where it is; `config.worktree`,
 * `commondir` and what is under `modules/` (a linked worktree's submodules are its own) in the git
 * directory; the rest in the common one.
 */
function placeOf(root: string, repository: GitRepository, raw: string): Buffer {
  if (raw === repository.marker) return nativePath(root, raw);
  const rel = raw.slice(repository.marker.length + 1);
  if (rel === HOOKS_PATH || rel.startsWith(`${HOOKS_PATH}/`))
    // No such folder this pass: a hook the start found there is one git no longer runs (absent).
    return under(repository.hooks ?? '/dev/null', rel.slice(HOOKS_PATH.length + 1) || '.');
  const own = OWN_FILES.has(rel) || rel.startsWith(`${MODULES}/`);
  return under(own ? repository.at.dir : repository.at.common, rel);
}

/** The name under a repository's marker of the folder `core.hooksPath` names (hooks-path.ts). */
export const HOOKS_PATH = 'hooks-path';

/** The name under a repository's marker of the settings git runs it with (settings.ts). */
export const SETTINGS = 'config-in-effect';

/**
 * Watched raw paths of `repositories` that are there now, in byte order, and the folders among them
 * that cannot be read. An entry under hooks or info that is neither a file, a symbolic link nor a
 * folder is a `git-state` error. The repositories are walked in the order of their markers, hooks,
 * info then `modules/` (git-walk.ts), within `GIT_STATE_ENTRIES` in all: a folder that would go past
 * it gives no path. `format` is the object format of the tree's repository, which git reads a
 * submodule's `HEAD` by; `modules: false` leaves `modules/` out (a start by an earlier version
 * recorded none of it: what it holds would all read as created).
 */
export function gitStatePaths(
  root: string,
  repositories: readonly GitRepository[],
  format: 'sha1' | 'sha256',
  modules = true,
): { paths: string[]; unreadable: Unreadable[] } {
  const walk = new GitStateWalk(placesWatched(repositories), format);
  for (const repository of [...repositories].sort((a, b) => compareRaw(a.marker, b.marker))) {
    const { marker, at } = repository;
    walk.file(nativePath(root, marker), marker);
    for (const name of STATE_FILES)
      walk.file(placeOf(root, repository, `${marker}/${name}`), `${marker}/${name}`);
    walk.folder(at.common, 'hooks', `${marker}/hooks`);
    if (repository.hooks !== undefined) walk.folder(repository.hooks, '.', `${marker}/${HOOKS_PATH}`);
    walk.folder(at.common, 'info', `${marker}/info`);
    if (repository.settings !== undefined) walk.paths.push(`${marker}/${SETTINGS}`);
    if (modules) walk.modules(at.dir, MODULES, `${marker}/${MODULES}`);
  }
  return { paths: walk.paths.sort(compareRaw), unreadable: walk.unreadable };
}

/**
 * The folders each repository is watched in, by identity (device and inode: the same folder
 * whatever path leads to it, a link or a top reached through one): its git directory, and its
 * common one when that is another.
 */
function placesWatched(repositories: readonly GitRepository[]): Map<string, Role> {
  const watched = new Map<string, Role>();
  for (const { at } of repositories) {
    const common = folderIdentity(Buffer.from(at.common, 'latin1'));
    if (common !== undefined) watched.set(common, 'common');
  }
  // A folder that is one repository's git directory and another's common one (a main repository
  // with a worktree nested in the tree) is a git directory: the first lists all of it.
  for (const { at } of repositories) {
    const dir = folderIdentity(Buffer.from(at.dir, 'latin1'));
    if (dir !== undefined) watched.set(dir, 'dir');
  }
  return watched;
}

/**
 * The content of a watched raw path where git keeps it (read as git reads it: a hooks folder that
 * is a link is followed), and that place when it is not the path under the tree's top.
 */
export function identifyGitState(
  root: string,
  repositories: readonly GitRepository[],
  raw: string,
  format: 'sha1' | 'sha256',
  until?: number,
): { content: Content; location?: string } {
  const repository = repositoryOfPath(repositories, raw);
  // Not a file: the settings git listed this pass, or none (absent).
  if (repository !== undefined && raw === `${repository.marker}/${SETTINGS}`)
    return { content: repository.settings ?? null };
  const place = repository === undefined ? nativePath(root, raw) : placeOf(root, repository, raw);
  const content = identifyAt(place, format, until);
  return place.equals(nativePath(root, raw)) ? { content } : { content, location: place.toString('utf8') };
}
