/**
 * Every git command reconciliation runs, and what it reads of the repository's git directory. The
 * agent can write `.git/` as it can write the tree: a command that waits on a FIFO planted there
 * would hang the close, so each runs asynchronously under the pass's deadline and is killed past
 * it (a `timeout` error), and the entries git reads first are checked to be regular files before
 * any command runs (a `git-state` error names the one that is not).
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import {
  type ConfigPlaces,
  configPlaces,
  GitError,
  type GitOutput,
  repositoryEnv,
  runGitOutput,
} from '../../core/git.js';
import { RegularFileError, readRegularFileSync } from '../../core/regular-file.js';
import type { Deadline } from './deadline.js';
import { ReconcileError } from './error.js';
import { pathOut, rawOfText, rawPath } from './paths.js';
import { gitRealPath } from './real-path.js';

/** A `.git` file or `commondir` names one folder: no more than this is read of one. */
const SMALL_FILE = 64 * 1024;

/**
 * Settings of the repository (or of the user's git config) that would let whoever writes the tree
 * steer what git reports about it, overridden on every git command Tally runs on a tree it
 * reconciles: a file-system monitor (a program of the config's choosing that tells git which files
 * changed), the index's cache of untracked directories, and the user's global exclude file.
 */
export const GIT_OVERRIDES = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.untrackedCache=false',
  '-c',
  'core.excludesFile=/dev/null',
];

/**
 * How untracked files are listed, at the start and at the close alike: ignored by `.gitignore`
 * files only. `.git/info/exclude` and the global exclude file are not project files, and a line
 * added to them leaves no trace in the tree, so they hide nothing here.
 */
export const UNTRACKED_ARGS = ['--others', '--exclude-per-directory=.gitignore'] as const;

/** The most output a git command may give (a listing of a very large tree). */
const GIT_OUTPUT_LIMIT = 1024 * 1024 * 1024;

/** Git commands a pass runs at once when it asks the same of every repository (one each). */
export const GIT_AT_ONCE = 4;

/**
 * The environment of every git command run on a tree Tally reconciles: git found and the user's and
 * system's config where `places` say (core/git.ts `repositoryEnv`: no `GIT_DIR` or the like of the
 * process that runs the pass). `GIT_NO_REPLACE_OBJECTS`: `git replace` cannot swap the start commit
 * for another. `LC_ALL=C`: messages Tally reads are git's own English ones.
 */
export function gitEnv(places: ConfigPlaces = configPlaces()): NodeJS.ProcessEnv {
  return { ...repositoryEnv(places), GIT_OPTIONAL_LOCKS: '0', GIT_NO_REPLACE_OBJECTS: '1', LC_ALL: 'C' };
}

/**
 * Runs git in `cwd` without blocking (core/git.ts: a process group of its own, killed with all it
 * started), the overrides first, stopped when the pass's deadline passes; `env` replaces the usual
 * environment; `stdin`, an open descriptor git reads. A non-zero exit is a `git` error, a stop at
 * the deadline a `timeout` one.
 */
export async function runGit(
  cwd: string,
  args: readonly string[],
  deadline: Deadline,
  env: NodeJS.ProcessEnv = gitEnv(),
  stdin?: number,
): Promise<GitOutput> {
  const left = deadline.at - Date.now();
  if (left <= 0) throw timedOut(cwd, args, deadline, false);
  try {
    return await runGitOutput([...GIT_OVERRIDES, ...args], {
      cwd,
      env,
      timeoutMs: left,
      maxOutput: GIT_OUTPUT_LIMIT,
      ...(stdin === undefined ? {} : { stdin }),
    });
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    if (error.code === 'timeout') throw timedOut(cwd, args, deadline, true);
    const stderr = typeof error.detail?.stderr === 'string' ? error.detail.stderr : '';
    const said = stderr.trim().split('\n').at(-1) ?? '';
    throw new ReconcileError(
      'git',
      `git ${args[0]} failed in ${cwd}${said ? `: ${said}` : ''}`,
      { args: [...args] },
      { cause: error },
    );
  }
}

/** `started`: git ran until the deadline (else the pass's time was spent before it could start). */
function timedOut(
  cwd: string,
  args: readonly string[],
  deadline: Deadline,
  started: boolean,
): ReconcileError {
  const said = started
    ? `git ${args[0]} in ${cwd} did not finish within the pass's ${deadline.ms} ms and was stopped (a FIFO or a device in a git directory keeps git waiting, or the pass's earlier work left it little time)`
    : `the pass's ${deadline.ms} ms were spent before git ${args[0]} in ${cwd} could start (many nested repositories, or places of many steps through deep folders)`;
  return new ReconcileError('timeout', said, { args: [...args], timeout_ms: deadline.ms });
}

/** NUL-separated git output as raw paths. */
export function nulList(output: Buffer): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < output.length; i++) {
    if (output[i] !== 0) continue;
    if (i > start) out.push(rawPath(output.subarray(start, i)));
    start = i + 1;
  }
  if (start < output.length) out.push(rawPath(output.subarray(start)));
  return out;
}

/** What git reads of a git directory before it does anything the pass asks of it. */
const READ_FIRST = [
  'HEAD',
  'config',
  'index',
  'packed-refs',
  'commondir',
  'shallow',
  'objects/info/alternates',
];

/** Throws unless `path` (symbolic links followed) is a regular file or absent. */
function mustBeFile(path: Buffer | string, shown: string): void {
  let kind: string;
  try {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined || stat.isFile()) return;
    kind = stat.isFIFO()
      ? 'a FIFO'
      : stat.isDirectory()
        ? 'a folder'
        : stat.isSocket()
          ? 'a socket'
          : 'a device';
  } catch {
    return; // unreadable or a file on the way: git fails on it, it does not wait
  }
  throw new ReconcileError(
    'git-state',
    `${shown} is ${kind}, not a regular file: git would wait on it or read it wrongly`,
    { path: shown },
  );
}

/**
 * The path a `.git` file (after its `gitdir: `) or a `commondir` names, as git takes it: the rest of
 * the file, the line ends at its end left out, up to a NUL. Blanks are part of it.
 */
function namedPath(text: string | undefined): string | undefined {
  return text?.replace(/[\r\n]+$/, '').split('\0')[0] || undefined;
}

/**
 * A `.git` file or a `commondir`, whole, as latin1; undefined when it is absent or not a regular
 * file. One past SMALL_FILE is refused (`git-state`): git reads such a file whole (a path followed by
 * any number of line ends), so where it points is not known, and a repository whose files cannot be
 * found must not be passed over as one with none.
 */
function readNamingFile(path: Buffer): string | undefined {
  try {
    return readRegularFileSync(path, SMALL_FILE).toString('latin1');
  } catch (error) {
    if (error instanceof RegularFileError && error.code === 'too-large')
      throw new ReconcileError(
        'git-state',
        `${pathOut(rawPath(path)).path} is larger than ${SMALL_FILE} bytes: git reads it whole, so where it keeps this repository's files is not known`,
        { path: pathOut(rawPath(path)).path },
      );
    return undefined;
  }
}

/** The bytes of a raw path (a latin1 string of them), for the file system. */
function bytesOf(raw: string): Buffer {
  return Buffer.from(raw, 'latin1');
}

/**
 * The git directory a `.git` file at `worktree` names (`gitdir: <path>`, relative to the work tree),
 * absolute, as a raw path (git takes any bytes: a latin1 string of them, never decoded); undefined
 * when there is no such file or it names none. A `.git` that is a link to such a file is read
 * where it leads, as git reads it. A relative path is put after the work tree as it is written,
 * as git puts it: its `..` are left for the file system (real-path.ts), never tidied by their text.
 */
export function namedGitDir(worktree: string): string | undefined {
  let file: Buffer;
  try {
    file = realpathSync(Buffer.from(join(worktree, '.git')), { encoding: 'buffer' });
  } catch {
    return undefined;
  }
  const text = readNamingFile(file);
  const named = text?.startsWith('gitdir: ') ? namedPath(text.slice('gitdir: '.length)) : undefined;
  if (named === undefined) return undefined;
  return isAbsolute(named) ? named : `${rawOfText(worktree)}/${named}`;
}

/**
 * The common directory a git directory's `commondir` names (a linked worktree's), else undefined:
 * raw paths. A relative one is put after the git directory as it is written, as git puts it: git
 * takes the real path of the whole (`gitRealPath`), and `..` after a link is not the link's folder.
 */
export function commonDirOf(dir: string): string | undefined {
  const common = namedPath(readNamingFile(bytesOf(`${dir}/commondir`)));
  if (common === undefined) return undefined;
  return isAbsolute(common) ? common : `${dir}/${common}`;
}

/**
 * Where a place a `.git` file, link or `commondir` names is now: as git resolves it, else as named.
 * Resolving it counts against the pass's deadline, as its git commands do.
 */
export function placeNow(raw: string, deadline: Deadline): string {
  return gitRealPath(raw, deadline) ?? raw;
}

/**
 * Checks that the entries git reads first in the repository at `root` (its `.git` folder, or the
 * git directory a `.git` file names, and the common directory of a worktree) are regular files.
 * A `.git` that is a link is taken as git takes it: as the folder or the file it leads to.
 */
export function checkGitEntries(root: string, deadline: Deadline): void {
  const dot = join(root, '.git');
  let stat: import('node:fs').Stats | undefined;
  try {
    stat = statSync(dot, { throwIfNoEntry: false });
  } catch {
    return;
  }
  if (stat === undefined) return;
  let dir = rawOfText(dot);
  if (!stat.isDirectory()) {
    mustBeFile(dot, '.git');
    const named = namedGitDir(root);
    if (named === undefined) return; // not a git file: git says so
    dir = named;
  }
  const at = dir === rawOfText(dot) ? dir : placeNow(dir, deadline);
  const shown = (entry: string) => (at === rawOfText(dot) ? `.git/${entry}` : pathOut(`${at}/${entry}`).path);
  for (const entry of READ_FIRST) mustBeFile(bytesOf(`${at}/${entry}`), shown(entry));
  const common = commonDirOf(dir);
  if (common)
    for (const entry of ['config', 'packed-refs']) {
      const path = `${placeNow(common, deadline)}/${entry}`;
      mustBeFile(bytesOf(path), pathOut(path).path);
    }
}

/** Whether `root` is in a git work tree with git available, and the repository's object hash. */
export async function repositoryOf(
  root: string,
  deadline: Deadline,
): Promise<{ format: 'sha1' | 'sha256' } | null> {
  checkGitEntries(root, deadline);
  let out: GitOutput;
  try {
    out = await runGit(root, ['rev-parse', '--is-inside-work-tree', '--show-object-format'], deadline);
  } catch (error) {
    if (error instanceof ReconcileError && error.code === 'timeout') throw error;
    return null; // not a repository, or no git
  }
  const [inside, format] = out.stdout.toString('utf8').trim().split('\n');
  if (inside !== 'true') return null;
  return { format: format === 'sha256' ? 'sha256' : 'sha1' };
}

/** HEAD's commit id, or undefined in a repository without commits. */
export async function headOf(root: string, deadline: Deadline): Promise<string | undefined> {
  try {
    const out = (await runGit(root, ['rev-parse', '--verify', '--quiet', 'HEAD'], deadline)).stdout;
    return out.toString('utf8').trim() || undefined;
  } catch (error) {
    if (error instanceof ReconcileError && error.code === 'timeout') throw error;
    return undefined;
  }
}

/** `git ls-tree -r` of a commit: raw path → blob id (gitlinks left out). */
export async function treeBlobs(
  root: string,
  commit: string,
  deadline: Deadline,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const listing = await runGit(root, ['ls-tree', '-r', '-z', '--full-tree', commit], deadline);
  for (const entry of nulList(listing.stdout)) {
    const tab = entry.indexOf('\t');
    const [mode, type, id] = entry.slice(0, tab).split(' ');
    if (type !== 'blob' || mode === '160000' || id === undefined) continue;
    out.set(entry.slice(tab + 1), id);
  }
  return out;
}
