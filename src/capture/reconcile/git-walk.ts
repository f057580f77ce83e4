/**
 * git's own folders, walked within one budget for a pass: each repository's hooks and `info/`, and
 * under its `modules/` the git directories its submodules keep there. A submodule whose work tree
 * has no `.git` (after `git submodule deinit`) keeps its git directory at `modules/<name>/` all the
 * same, and `git submodule update --init` runs the hooks and config found there: no `.git` in the
 * tree leads to it, so the walk finds it. A name may hold `/` (`modules/libs/x/`), and a submodule's
 * own submodules lie in its git directory's `modules/`. A folder is taken for a git directory as
 * git takes one (`is_git_directory`), so a `HEAD` planted in a folder of a name hides nothing below
 * it. Links are followed, as git follows them.
 */
import {
  accessSync,
  closeSync,
  constants,
  type Dir,
  type Dirent,
  lstatSync,
  opendirSync,
  readlinkSync,
  statSync,
} from 'node:fs';
import { openRegularSync, READ_NOFOLLOW, readUpTo } from '../../core/regular-file.js';
import { type Unreadable, unreadableCode } from './content.js';
import { ReconcileError } from './error.js';
import { rawPath } from './paths.js';

/**
 * Entries under git's own folders (hooks, info: a few files each; the folders of `modules/`) one
 * pass walks at most, for all its repositories together. A hooks folder made a link to `/usr` would
 * otherwise be walked and hashed whole, a row a file; a folder that would take the pass past it is
 * not walked, and is unreadable with code `too-many`, as is every folder after it.
 */
export const GIT_STATE_ENTRIES = 10_000;

/** The code of a folder of git's own left unwalked past `GIT_STATE_ENTRIES`. */
export const TOO_MANY = 'too-many';

/** Thrown inside a walk when the pass's entries run out. */
class OutOfEntries extends Error {}

/** The own files of one repository, beside its hooks and info: git reads each as a whole. */
export const STATE_FILES = ['config', 'config.worktree', 'commondir'];

/** Those git reads from a git directory itself, not from the common one. */
export const DIR_FILES = ['config.worktree', 'commondir'];

/** What a folder is to a repository watched through its `.git`: its git directory or its common one. */
export type Role = 'dir' | 'common';

/** The file system's name of `rel` under a raw place. */
export function under(place: string, rel: string): Buffer {
  return Buffer.from(`${place}/${rel}`, 'latin1');
}

/** Whether a path is a file or a symbolic link (not followed): what git reads whole. */
function fileOrLink(path: Buffer | string): boolean {
  try {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    return stat?.isFile() === true || stat?.isSymbolicLink() === true;
  } catch {
    return false;
  }
}

/** Whether a place is a folder, links followed. */
function isFolder(place: Buffer): boolean {
  return folderIdentity(place) !== undefined;
}

/** Which folder a place is, whatever the path to it: device and inode, or undefined when it is not one. */
export function folderIdentity(place: Buffer): string | undefined {
  try {
    const stat = statSync(place, { bigint: true });
    return stat.isDirectory() ? `${stat.dev}:${stat.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/** A commit id as git reads one at the start of a `HEAD`, by object format. */
const COMMIT_ID = { sha1: /^[0-9a-fA-F]{40}/, sha256: /^[0-9a-fA-F]{64}/ };

/** A `HEAD` naming a branch, as git reads one (its blanks only: git's `isspace`). */
const SYMBOLIC = /^ref:[ \t\n\r]*refs\//;

/** Whether anything is at a path; a path that cannot be looked at counts as something. */
function present(path: Buffer): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}

/** Whether a folder holds a `HEAD` that is not a folder: git may take it for a git directory. */
function hasHead(folder: Buffer): boolean {
  try {
    const stat = lstatSync(Buffer.concat([folder, Buffer.from('/HEAD')]), { throwIfNoEntry: false });
    return stat !== undefined && !stat.isDirectory();
  } catch {
    return false;
  }
}

/**
 * A `HEAD` as git's `validate_headref` takes it: a link to `refs/…`, or a regular file (its first
 * 255 bytes) naming `refs/…` or holding a commit id. One git would wait on (a FIFO) is not.
 */
function validHead(path: Buffer, format: 'sha1' | 'sha256'): boolean {
  try {
    if (lstatSync(path).isSymbolicLink())
      return rawPath(readlinkSync(path, { encoding: 'buffer' })).startsWith('refs/');
    const { fd } = openRegularSync(path, READ_NOFOLLOW);
    try {
      const text = rawPath(readUpTo(fd, 255));
      return SYMBOLIC.test(text) || COMMIT_ID[format].test(text);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * Whether git takes a folder for a git directory (`is_git_directory`): a valid `HEAD`, `objects`
 * and `refs` it can enter. git then refuses a submodule whose name puts its git directory inside
 * it, so no other folder under it is one. A `commondir` sends git to look for `objects` and `refs`
 * where it leads, which is not followed here: such a folder is not taken for one, and is walked.
 */
function isGitDirectory(folder: Buffer, format: 'sha1' | 'sha256'): boolean {
  const at = (name: string) => Buffer.concat([folder, Buffer.from(`/${name}`)]);
  if (!validHead(at('HEAD'), format) || present(at('commondir'))) return false;
  try {
    accessSync(at('objects'), constants.X_OK);
    accessSync(at('refs'), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The paths of git's own files the walk finds, and the folders it cannot read. `covered` maps the
 * identity of each watched repository's git directory and common directory to which it is: a
 * submodule's git directory that one of them is watched through it (an initialised submodule,
 * through its `.git` in the tree) is not listed again: one change, one row.
 */
export class GitStateWalk {
  readonly paths: string[] = [];
  readonly unreadable: Unreadable[] = [];
  private left = GIT_STATE_ENTRIES;

  constructor(
    private readonly covered: ReadonlyMap<string, Role>,
    private readonly format: 'sha1' | 'sha256',
  ) {}

  /** A file git reads whole, when it is one (or a link). */
  file(place: Buffer, raw: string): void {
    if (fileOrLink(place)) this.paths.push(raw);
  }

  /**
   * One of git's own folders, whole or not at all. An entry that is neither a file, a symbolic link
   * nor a folder is a `git-state` error.
   */
  folder(base: string, rel: string, raw: string): void {
    const found: string[] = [];
    const unread: Unreadable[] = [];
    try {
      this.walk(base, rel, raw, found, unread);
    } catch (error) {
      if (!(error instanceof OutOfEntries)) throw error;
      this.left = 0;
      this.unreadable.push({ raw, code: TOO_MANY, folder: true });
      return;
    }
    this.paths.push(...found);
    this.unreadable.push(...unread);
  }

  /**
   * The git directories under `<base>/<rel>`, a repository's `modules/` (named `raw` under its
   * marker): each folder in it, at any depth, that is not one is part of a name.
   */
  modules(base: string, rel: string, raw: string): void {
    for (const name of this.subfolders(base, rel, raw))
      this.moduleFolder(base, `${rel}/${name}`, `${raw}/${name}`);
  }

  /**
   * A folder under `modules/`. Holding a `HEAD`, it may be a submodule's git directory: its own
   * files, hooks, info and `modules/` are listed like a repository's (but those a watched
   * repository lists already). Unless git takes it for a git directory, its folders may be the rest
   * of a longer name and are walked too (but the hooks and info listed whole).
   */
  private moduleFolder(base: string, rel: string, raw: string): void {
    const place = under(base, rel);
    const own = hasHead(place);
    const role = own ? this.covered.get(folderIdentity(place) ?? '') : undefined;
    if (own && role !== 'dir') {
      for (const name of role === 'common' ? DIR_FILES : STATE_FILES)
        this.file(under(base, `${rel}/${name}`), `${raw}/${name}`);
      if (role === undefined) {
        this.folder(base, `${rel}/hooks`, `${raw}/hooks`);
        this.folder(base, `${rel}/info`, `${raw}/info`);
      }
    }
    if (own && isGitDirectory(place, this.format)) {
      if (role !== 'dir') this.modules(base, `${rel}/modules`, `${raw}/modules`);
      return;
    }
    const listed = own && role === undefined ? ['hooks', 'info'] : [];
    for (const name of this.subfolders(base, rel, raw))
      if (!listed.includes(name)) this.moduleFolder(base, `${rel}/${name}`, `${raw}/${name}`);
  }

  /** The names of the folders (or links to one) in a folder; none past the budget (`too-many`). */
  private subfolders(base: string, rel: string, raw: string): string[] {
    let found: Dirent[];
    try {
      found = this.entries(base, rel, raw, this.unreadable);
    } catch (error) {
      if (!(error instanceof OutOfEntries)) throw error;
      this.left = 0;
      this.unreadable.push({ raw, code: TOO_MANY, folder: true });
      return [];
    }
    return found
      .map((entry) => ({ entry, name: rawPath(entry.name as unknown as Buffer) }))
      .filter(
        ({ entry, name }) =>
          entry.isDirectory() || (entry.isSymbolicLink() && isFolder(under(base, `${rel}/${name}`))),
      )
      .map(({ name }) => name);
  }

  private walk(base: string, rel: string, raw: string, into: string[], unread: Unreadable[]): void {
    for (const entry of this.entries(base, rel, raw, unread)) {
      const name = rawPath(entry.name as unknown as Buffer);
      if (entry.isDirectory()) this.walk(base, `${rel}/${name}`, `${raw}/${name}`, into, unread);
      else if (entry.isFile() || entry.isSymbolicLink()) into.push(`${raw}/${name}`);
      else
        throw new ReconcileError('git-state', `${raw}/${name} is not a regular file, a link or a folder`, {
          path: `${raw}/${name}`,
        });
    }
  }

  /**
   * The entries of a folder, each counted against the budget (past it, `OutOfEntries`), read whole
   * before any is looked into. One that cannot be read is in `unread`, with what was read of it.
   */
  private entries(base: string, rel: string, raw: string, unread: Unreadable[]): Dirent[] {
    const found: Dirent[] = [];
    let dir: Dir;
    try {
      dir = opendirSync(under(base, rel), { encoding: 'buffer' as BufferEncoding });
    } catch (error) {
      const code = unreadableCode(error);
      if (code !== null) unread.push({ raw, code, folder: true });
      return found;
    }
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (--this.left < 0) throw new OutOfEntries();
        found.push(entry);
      }
    } catch (error) {
      if (error instanceof OutOfEntries) throw error;
      const code = unreadableCode(error);
      if (code !== null) unread.push({ raw, code, folder: true });
    } finally {
      dir.closeSync();
    }
    return found;
  }
}
