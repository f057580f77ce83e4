/**
 * The files of a working tree as the project's `.gitignore` files show them, listed by git with a
 * git directory of Tally's own: no index, no objects, no config (the repository's and the user's
 * are not read, and the settings that change what git lists are pinned). Nothing the tree's
 * `.git/` holds — which files its index says are tracked, what its config sets — takes part, so an
 * agent that writes `.git/` cannot hide a file from it.
 * A folder holding a repository of its own (git does not look into one) is listed the same way,
 * and every `.git` below the top is named, so that making a folder a repository is itself seen.
 */
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Unreadable, unreadableCode } from './content.js';
import type { Deadline } from './deadline.js';
import { ReconcileError } from './error.js';
import { nulList, runGit } from './git.js';
import { compareRaw, nativePath, rawOfText, rawPath, writtenByTally } from './paths.js';

/** Repositories nested in the tree listed at most (each costs two git processes); the rest are counted. */
export const NESTED_LISTED = 100;

export interface ProjectTree {
  /**
   * Raw paths of the files (and symbolic links) no `.gitignore` ignores — in the tree and in every
   * listed repository nested in it — and the `.gitignore` files that ignore themselves.
   */
  files: string[];
  /** Folders holding a repository of their own, at any depth (raw, no trailing slash). */
  nested: string[];
  /** Nested repositories past `NESTED_LISTED` (or with a name git cannot be given): not listed. */
  unlisted: string[];
  /** Every `.git` below the top (a folder or a file), in byte order: `<folder>/.git`. */
  markers: string[];
  /** Folders git or Tally could not open. */
  unreadable: Unreadable[];
}

/**
 * The index git is told to read: a path no process but root's can create (`/proc` is the kernel's,
 * and where there is none, `/` is root's), so git always finds none. The git directory itself is a
 * temporary folder the agent, as the same user, can write while the pass runs: an index planted
 * there would name a new file as tracked, and `ls-files --others` would leave it out.
 */
const NO_INDEX = '/proc/self/tally-no-index';

/**
 * Settings read from a config file that change which files git lists, or how it names them, pinned
 * on the command line (which no config file overrides): a config planted in the temporary git
 * directory could otherwise say `core.ignoreCase` (a `.gitignore` line `build/` then hides a new
 * `Build/`, and a folder named `.GIT` is never walked) or `core.precomposeUnicode`.
 */
const LISTING_PINS = ['-c', 'core.ignoreCase=false', '-c', 'core.precomposeUnicode=false'];

/** An empty git directory (HEAD, objects, refs): what git needs to accept it, nothing more. */
function emptyGitDir(): string {
  try {
    const dir = mkdtempSync(join(tmpdir(), 'tally-listing-'));
    mkdirSync(join(dir, 'objects'));
    mkdirSync(join(dir, 'refs'));
    writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
    return dir;
  } catch (error) {
    throw new ReconcileError('git', 'no temporary git directory could be made to list the tree', undefined, {
      cause: error,
    });
  }
}

const WARNING = /warning: could not open directory '([\s\S]*?)': ([^\n']*)\n/g;

/** The folders git warned it could not open (git goes on and exits 0), relative to its work tree. */
function unopened(stderr: Buffer): { raw: string; code: string }[] {
  const out: { raw: string; code: string }[] = [];
  for (const match of stderr.toString('latin1').matchAll(WARNING))
    out.push({ raw: (match[1] ?? '').replace(/\/$/, ''), code: codeOf(match[2] ?? '') });
  return out;
}

function codeOf(message: string): string {
  return message === 'Permission denied' ? 'EACCES' : message === 'Too many open files' ? 'EMFILE' : message;
}

interface Visible {
  files: string[];
  nested: string[];
  unreadable: Unreadable[];
}

/** One folder (`''`: the tree) listed by git with Tally's own git directory; paths relative to `root`. */
async function listVisible(root: string, folder: string, dir: string, deadline: Deadline): Promise<Visible> {
  const work = folder === '' ? root : `${root}/${Buffer.from(folder, 'latin1').toString('utf8')}`;
  // Only what git needs to run: no variable of the caller's environment steers it. The
  // overrides apply too, so they hold even against a config written into the directory meanwhile.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_DIR: dir,
    GIT_WORK_TREE: work,
    GIT_INDEX_FILE: NO_INDEX,
    HOME: dir,
    XDG_CONFIG_HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
  };
  const list = [
    '-c',
    'safe.directory=*',
    ...LISTING_PINS,
    'ls-files',
    '-z',
    '--others',
    '--exclude-per-directory=.gitignore',
  ];
  const [out, selfIgnored] = await Promise.all([
    runGit(work, list, deadline, env),
    // A `.gitignore` that ignores itself (`*` in a new folder's own) would hide the folder and
    // itself: such files are listed too, so that one written during the session is a row. Ignored
    // folders are named, not walked (`--directory`), and dropped here.
    runGit(work, [...list, '--ignored', '--directory', '--', ':(glob)**/.gitignore'], deadline, env),
  ]);
  const prefix = folder === '' ? '' : `${folder}/`;
  const visible: Visible = { files: [], nested: [], unreadable: [] };
  for (const raw of nulList(out.stdout)) {
    if (raw.endsWith('/')) visible.nested.push(prefix + raw.slice(0, -1));
    else visible.files.push(prefix + raw);
  }
  for (const raw of nulList(selfIgnored.stdout))
    if (!raw.endsWith('/') && (raw === '.gitignore' || raw.endsWith('/.gitignore')))
      visible.files.push(prefix + raw);
  const seen = new Set<string>();
  for (const { raw, code } of [...unopened(out.stderr), ...unopened(selfIgnored.stderr)]) {
    const path = raw === '' ? folder : prefix + raw;
    if (seen.has(path)) continue;
    seen.add(path);
    visible.unreadable.push({ raw: path, code, folder: true });
  }
  return visible;
}

/**
 * The tree and the repositories nested in it (at any depth, the first `NESTED_LISTED` of them in
 * breadth-first order), each listed by git with Tally's own git directory; what Tally writes under
 * `.tally/` during a session left out.
 */
export async function listProject(root: string, deadline: Deadline): Promise<ProjectTree> {
  const tree: ProjectTree = { files: [], nested: [], unlisted: [], markers: [], unreadable: [] };
  const dir = emptyGitDir();
  try {
    const queue = [''];
    let listed = 0;
    for (let folder = queue.shift(); folder !== undefined; folder = queue.shift()) {
      if (folder !== '') {
        if (writtenByTally(folder)) continue;
        tree.nested.push(folder);
        // git takes a folder's name as text: a name that is not UTF-8 cannot be its work tree.
        if (listed >= NESTED_LISTED || !isUtf8(folder)) {
          tree.unlisted.push(folder);
          continue;
        }
        listed++;
        // git would not even start in a folder it cannot enter: the folder is named instead.
        const code = enterable(root, folder);
        if (code !== undefined) {
          if (code !== null) tree.unreadable.push({ raw: folder, code, folder: true });
          continue;
        }
      }
      const visible = await listVisible(root, folder, dir, deadline);
      for (const raw of visible.files) if (!writtenByTally(raw)) tree.files.push(raw);
      tree.unreadable.push(...visible.unreadable);
      queue.push(...visible.nested);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  tree.markers = gitMarkers(root, tree);
  return tree;
}

/** Whether there is an entry at `root/raw` (one that cannot be looked at is not known to be). */
function exists(root: string, raw: string): boolean {
  try {
    return lstatSync(nativePath(root, raw), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** undefined when git can list the folder; else why not (null: it is gone). */
function enterable(root: string, folder: string): string | null | undefined {
  try {
    accessSync(nativePath(root, folder), constants.R_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return unreadableCode(error);
  }
}

/** Whether a raw name is UTF-8: only such a folder can be given to git as a work tree. */
export function isUtf8(raw: string): boolean {
  return Buffer.from(Buffer.from(raw, 'latin1').toString('utf8'), 'utf8').equals(Buffer.from(raw, 'latin1'));
}

const DOT_GIT = Buffer.from('.git');

/**
 * A folder's folders and `.git` as [raw name, is a folder], or the error code when it cannot be
 * listed (absent: none). Read as text, the cheaper way, unless a name is not UTF-8.
 */
function entriesOf(root: string, folder: string): [string, boolean][] | string {
  const path = folder === '' ? Buffer.from(root) : nativePath(root, folder);
  try {
    const named = readdirSync(path.toString('utf8'), { withFileTypes: true });
    if (isUtf8(folder) && !named.some((entry) => entry.name.includes('\uFFFD')))
      // Only folders and `.git` are looked at: only their names need their raw form.
      return named
        .filter((entry) => entry.isDirectory() || entry.name === '.git')
        .map((entry) => [rawOfText(entry.name), entry.isDirectory()]);
    return readdirSync(path, { withFileTypes: true, encoding: 'buffer' })
      .filter((entry) => entry.isDirectory() || entry.name.equals(DOT_GIT))
      .map((entry) => [rawPath(entry.name), entry.isDirectory()]);
  } catch (error) {
    return unreadableCode(error) ?? [];
  }
}

/**
 * Every `.git` (a folder or a file) in a folder that holds a listed file or a nested repository,
 * or one level below such a folder in a folder that holds neither (git lists nothing of a folder
 * whose only entry is a `.git`): git never shows these, and a new one can make a folder a
 * repository of its own. The top's own `.git` is the repository, not a marker.
 */
function gitMarkers(root: string, tree: ProjectTree): string[] {
  const folders = new Set<string>(['']);
  const addWithParents = (raw: string): void => {
    for (let at = raw.length; at > 0; at = raw.lastIndexOf('/', at - 1)) {
      const folder = raw.slice(0, at);
      if (folders.has(folder)) return;
      folders.add(folder);
    }
  };
  for (const raw of tree.files) {
    const slash = raw.lastIndexOf('/');
    if (slash > 0) addWithParents(raw.slice(0, slash));
  }
  for (const folder of tree.nested) addWithParents(folder);
  const markers = new Set<string>();
  for (const folder of folders) {
    const entries = entriesOf(root, folder);
    if (typeof entries === 'string') {
      if (!tree.unreadable.some((u) => u.raw === folder))
        tree.unreadable.push({ raw: folder, code: entries, folder: true });
      // A folder that can be searched, not read, still shows its own .git.
      if (folder !== '' && exists(root, `${folder}/.git`)) markers.add(`${folder}/.git`);
      continue;
    }
    const prefix = folder === '' ? '' : `${folder}/`;
    for (const [name, isFolder] of entries) {
      if (name === '.git') {
        if (folder !== '') markers.add(`${prefix}.git`);
        continue;
      }
      const child = prefix + name;
      if (!isFolder || folders.has(child) || writtenByTally(child)) continue;
      if (exists(root, `${child}/.git`)) markers.add(`${child}/.git`);
    }
  }
  return [...markers].sort(compareRaw);
}
