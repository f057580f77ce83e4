/**
 * What a working tree holds, file by file: the listing (git's own, so `.gitignore` is respected, or a
 * walk of the tree outside git), and a content identity per file (SHA-256, plus git's blob id so a
 * file can be compared with a commit without reading the commit's blobs). Paths are kept as raw
 * bytes (a latin1 string, one code unit per byte) so a name that is not UTF-8 survives; `pathOut`
 * turns one into what a record can carry.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { TallyError } from '../../core/errors.js';
import { digest } from '../../core/hash.js';

export type ReconcileErrorCode = 'git' | 'baseline' | 'bad-option';

/** The working tree could not be read as the baseline says it was; `detail` names what. */
export class ReconcileError extends TallyError<ReconcileErrorCode> {}

/** Files hashed at most per snapshot unless the caller says otherwise; the rest are counted. */
export const DEFAULT_FILE_LIMIT = 100_000;

/** Directories never looked into: Tally's own state and git's. */
const SKIPPED_DIRS = new Set(['.tally', '.git']);

export interface FileIdentity {
  /** "sha256:<hex>" of the content (of the link text for a symbolic link). */
  sha256: string;
  /** git's object id of the same bytes (`blob <n>\0…`), in the repository's hash. */
  blob: string;
}

/** A raw path (latin1 string of its bytes) as a record carries it: text, and the bytes when not UTF-8. */
export interface PathOut {
  path: string;
  path_b64?: string;
  non_utf8?: true;
}

export function rawPath(bytes: Buffer): string {
  return bytes.toString('latin1');
}

export function pathOut(raw: string): PathOut {
  const bytes = Buffer.from(raw, 'latin1');
  try {
    return { path: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { path: bytes.toString('utf8'), path_b64: bytes.toString('base64'), non_utf8: true };
  }
}

/** The raw form of a UTF-8 path as written in a record. */
export function rawOfText(path: string): string {
  return rawPath(Buffer.from(path, 'utf8'));
}

/**
 * Settings of the repository (or of the user's git config) that would let whoever writes the tree
 * steer what git reports about it, overridden on every git command Tally runs on a tree it
 * reconciles: a file-system monitor (a program of the config's choosing that tells git which files
 * changed), the index's cache of untracked directories, and the user's global exclude file.
 * `GIT_NO_REPLACE_OBJECTS`: `git replace` cannot swap the start commit for another.
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

/** The environment of every git command run on a tree Tally reconciles. */
function gitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_NO_REPLACE_OBJECTS: '1' };
}

function gitFailed(root: string, args: string[], error: unknown): ReconcileError {
  return new ReconcileError('git', `git ${args[0]} failed in ${root}`, { args }, { cause: error });
}

export function gitBuffer(root: string, args: string[]): Buffer {
  try {
    return execFileSync('git', [...GIT_OVERRIDES, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: GIT_OUTPUT_LIMIT,
      env: gitEnv(),
    });
  } catch (error) {
    throw gitFailed(root, args, error);
  }
}

/**
 * `gitBuffer` without blocking, so git runs beside Tally's own work; `env` replaces the usual
 * environment (the overrides still apply).
 */
export function gitBufferAsync(root: string, args: string[], env = gitEnv()): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...GIT_OVERRIDES, ...args],
      { cwd: root, encoding: 'buffer', maxBuffer: GIT_OUTPUT_LIMIT, env },
      (error, stdout) => (error ? reject(gitFailed(root, args, error)) : resolve(stdout)),
    );
  });
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

/**
 * git's own files that decide what runs or what git shows, watched like project files: the
 * repository's config (hooks path, filters, fsmonitor), its hooks (run by the user's next commit)
 * and `info/` (exclude, attributes). Raw paths under the work tree, in byte order.
 */
export function gitStatePaths(root: string): string[] {
  const out: string[] = [];
  const base = Buffer.from(`${root}/`, 'utf8');
  const walk = (rel: string): void => {
    let entries: import('node:fs').Dirent<Buffer>[];
    try {
      entries = readdirSync(Buffer.concat([base, Buffer.from(rel, 'latin1')]), {
        withFileTypes: true,
        encoding: 'buffer',
      });
    } catch {
      return;
    }
    for (const entry of entries) {
      const raw = `${rel}/${rawPath(entry.name)}`;
      if (entry.isDirectory()) walk(raw);
      else out.push(raw);
    }
  };
  try {
    if (!lstatSync(`${root}/.git/config`).isDirectory()) out.push('.git/config');
  } catch {
    // no config file
  }
  walk('.git/hooks');
  walk('.git/info');
  return out.sort(compareRaw);
}

/** The repository's object hash: sha1, or sha256 in a repository created with that format. */
export function objectFormat(root: string): 'sha1' | 'sha256' {
  try {
    return gitBuffer(root, ['rev-parse', '--show-object-format']).toString('utf8').trim() === 'sha256'
      ? 'sha256'
      : 'sha1';
  } catch {
    return 'sha1';
  }
}

/**
 * The identity of the file at `root/raw`, or null when there is none (absent, a directory such as
 * a submodule, or unreadable). A symbolic link is identified by its target text, as git stores it.
 */
export function identify(root: string, raw: string, format: 'sha1' | 'sha256'): FileIdentity | null {
  const native = nativePath(root, raw);
  let bytes: Buffer;
  try {
    const stat = lstatSync(native);
    if (stat.isSymbolicLink()) bytes = readlinkSync(native, { encoding: 'buffer' });
    else if (stat.isFile()) bytes = readFileSync(native);
    else return null;
  } catch {
    return null;
  }
  const blob = createHash(format).update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
  return { sha256: digest(bytes), blob };
}

/** The file system's name of a raw path under `root` (bytes, so no name is re-encoded). */
export function nativePath(root: string, raw: string): Buffer {
  return Buffer.concat([Buffer.from(root, 'utf8'), Buffer.from('/'), Buffer.from(raw, 'latin1')]);
}

export interface Listing {
  /** Raw paths, sorted by byte order, at most `limit` of them. */
  paths: string[];
  /** Files past the limit, not listed. */
  skipped: number;
}

function bounded(all: string[], limit: number): Listing {
  const sorted = [...new Set(all)].sort(compareRaw);
  return { paths: sorted.slice(0, limit), skipped: Math.max(0, sorted.length - limit) };
}

/** Byte order of two raw paths (latin1 strings: one code unit per byte). */
export function compareRaw(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether a raw path is Tally's own state folder or under it (never reconciled). */
export function insideTally(raw: string): boolean {
  return raw === '.tally' || raw.startsWith('.tally/');
}

/**
 * Every file of the tree that git would show — tracked and untracked, `.gitignore` and the other
 * exclude files respected — or, outside a repository, every file under `root` but Tally's and git's
 * own directories. Symbolic links are not followed.
 */
export function listTree(root: string, inGit: boolean, limit = DEFAULT_FILE_LIMIT): Listing {
  if (inGit) {
    const out = gitBuffer(root, ['ls-files', '-z', '--cached', ...UNTRACKED_ARGS]);
    return bounded(
      nulList(out).filter((p) => !insideTally(p)),
      limit,
    );
  }
  const listing = walkFiles(root, '', limit, (rel, name) => rel === name && SKIPPED_DIRS.has(name));
  return { paths: listing.paths.sort(compareRaw), skipped: listing.skipped };
}

/**
 * The files and symbolic links under `root/from` (`''`: the whole tree), walked in byte order so
 * which files a limit keeps depends only on the tree; `skipDir(rel, name)` leaves a folder out.
 * Raw paths relative to `root`; at most `limit`, the rest counted.
 */
export function walkFiles(
  root: string,
  from: string,
  limit: number,
  skipDir: (rel: string, name: string) => boolean,
): Listing {
  const paths: string[] = [];
  let skipped = 0;
  const walk = (dir: Buffer, prefix: string): void => {
    let entries: import('node:fs').Dirent<Buffer>[];
    try {
      entries = readdirSync(dir, { withFileTypes: true, encoding: 'buffer' });
    } catch {
      return;
    }
    entries.sort((a, b) => Buffer.compare(a.name, b.name));
    for (const entry of entries) {
      const name = rawPath(entry.name);
      const rel = prefix === '' ? name : `${prefix}/${name}`;
      if (entry.isDirectory()) {
        if (!skipDir(rel, name)) walk(Buffer.concat([dir, Buffer.from('/'), entry.name]), rel);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        if (paths.length < limit) paths.push(rel);
        else skipped++;
      }
    }
  };
  walk(from === '' ? Buffer.from(root, 'utf8') : nativePath(root, from), from);
  return { paths, skipped };
}

/** `git ls-tree -r` of a commit: raw path → blob id (gitlinks left out). */
export function treeBlobs(root: string, commit: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of nulList(gitBuffer(root, ['ls-tree', '-r', '-z', '--full-tree', commit]))) {
    const tab = entry.indexOf('\t');
    const [mode, type, id] = entry.slice(0, tab).split(' ');
    if (type !== 'blob' || mode === '160000' || id === undefined) continue;
    out.set(entry.slice(tab + 1), id);
  }
  return out;
}

export interface TreeSnapshot {
  /** Raw path → identity. */
  files: Map<string, FileIdentity>;
  skipped: number;
  limit: number;
}

/** Every listed file with its identity: what `wrap` and reconciliation outside git compare. */
export function snapshotTree(root: string, inGit: boolean, limit = DEFAULT_FILE_LIMIT): TreeSnapshot {
  const listing = listTree(root, inGit, limit);
  const format = inGit ? objectFormat(root) : 'sha1';
  const files = new Map<string, FileIdentity>();
  for (const raw of listing.paths) {
    const id = identify(root, raw, format);
    if (id !== null) files.set(raw, id);
  }
  return { files, skipped: listing.skipped, limit };
}

/** A snapshot as JSON (kept beside the session, its digest in the signed start record). */
export function snapshotJson(snapshot: TreeSnapshot): {
  limit: number;
  skipped: number;
  files: [string, string, string][];
} {
  return {
    limit: snapshot.limit,
    skipped: snapshot.skipped,
    files: [...snapshot.files.entries()].map(([raw, id]) => [
      Buffer.from(raw, 'latin1').toString('base64'),
      id.sha256,
      id.blob,
    ]),
  };
}

export function snapshotOfJson(value: unknown): TreeSnapshot {
  const v = value as { limit?: unknown; skipped?: unknown; files?: unknown };
  if (typeof v?.limit !== 'number' || typeof v.skipped !== 'number' || !Array.isArray(v.files))
    throw new ReconcileError('baseline', 'the tree baseline is not a snapshot', { field: 'files' });
  const files = new Map<string, FileIdentity>();
  for (const [i, entry] of v.files.entries()) {
    if (!Array.isArray(entry) || entry.length !== 3 || !entry.every((x) => typeof x === 'string'))
      throw new ReconcileError('baseline', `tree baseline entry ${i} is not [path, sha256, blob]`, {
        field: `files/${i}`,
      });
    const [b64, sha, blob] = entry as [string, string, string];
    files.set(rawPath(Buffer.from(b64, 'base64')), { sha256: sha, blob });
  }
  return { files, skipped: v.skipped, limit: v.limit };
}
