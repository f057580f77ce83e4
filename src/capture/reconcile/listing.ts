/**
 * The files of a working tree as the project's `.gitignore` files show them, listed by git with a
 * git directory of Tally's own: an empty index, no objects, no config (the repository's and the
 * user's are not read). Nothing the tree's `.git/` holds — which files its index says are tracked,
 * what its config sets — takes part, so an agent that writes `.git/` cannot hide a file from it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_FILE_LIMIT,
  gitBufferAsync,
  insideTally,
  type Listing,
  nulList,
  ReconcileError,
  walkFiles,
} from './workspace.js';

export interface VisibleTree {
  /** Raw paths of the files (and symbolic links) no `.gitignore` ignores, in git's order, and the `.gitignore` files that ignore themselves. */
  files: string[];
  /**
   * Folders git does not look into because they hold a repository of their own (a submodule, a
   * clone): raw paths without the trailing slash.
   */
  nested: string[];
}

/** An empty git directory (HEAD, objects, refs): what git needs to accept it, nothing more. */
function emptyGitDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-listing-'));
  mkdirSync(join(dir, 'objects'));
  mkdirSync(join(dir, 'refs'));
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  return dir;
}

export async function listVisible(root: string): Promise<VisibleTree> {
  let dir: string;
  try {
    dir = emptyGitDir();
  } catch (error) {
    throw new ReconcileError(
      'git',
      'no temporary git directory could be made to list the tree',
      { root },
      { cause: error },
    );
  }
  let out: Buffer;
  let selfIgnored: Buffer;
  try {
    // Only what git needs to run: no variable of the caller's environment steers it. The
    // overrides apply too, so they hold even against a config written into the directory meanwhile.
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_DIR: dir,
      GIT_WORK_TREE: root,
      GIT_INDEX_FILE: join(dir, 'index'),
      HOME: dir,
      XDG_CONFIG_HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_OPTIONAL_LOCKS: '0',
    };
    const list = [
      '-c',
      'safe.directory=*',
      'ls-files',
      '-z',
      '--others',
      '--exclude-per-directory=.gitignore',
    ];
    [out, selfIgnored] = await Promise.all([
      gitBufferAsync(root, list, env),
      // A `.gitignore` that ignores itself (`*` in a new folder's own) would hide the folder and
      // itself: such files are listed too, so that one written during the session is a row. Ignored
      // folders are named, not walked (`--directory`), and dropped here.
      gitBufferAsync(root, [...list, '--ignored', '--directory', '--', ':(glob)**/.gitignore'], env),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const files: string[] = [];
  const nested: string[] = [];
  for (const raw of nulList(out)) {
    if (insideTally(raw)) continue;
    if (raw.endsWith('/')) nested.push(raw.slice(0, -1));
    else files.push(raw);
  }
  for (const raw of nulList(selfIgnored))
    if (!raw.endsWith('/') && !insideTally(raw) && (raw === '.gitignore' || raw.endsWith('/.gitignore')))
      files.push(raw);
  return { files, nested };
}

/**
 * Every file under a folder that holds a repository of its own, `.git` folders left out and no
 * `.gitignore` read: what the close looks at in such a folder that did not hold one at the start
 * (an agent can make any new folder a repository to keep git out of it).
 */
export function listNested(root: string, folder: string, limit = DEFAULT_FILE_LIMIT): Listing {
  return walkFiles(root, folder, limit, (_rel, name) => name === '.git');
}
