/**
 * What a working tree holds, file by file, for `tally wrap` and for reconciliation outside git: the
 * listing (Tally's own git listing plus the index's paths in a repository, a walk of the tree
 * outside one), and a content identity per file. A limit bounds how many files are hashed; a
 * snapshot says where it was cut, so two snapshots are compared only up to where both reach.
 */
import { readdirSync } from 'node:fs';
import {
  type FileIdentity,
  identify,
  isUnread,
  LeadingFolders,
  TIMEOUT,
  type Unreadable,
  unreadableCode,
} from './content.js';
import { type Deadline, deadlineAfter } from './deadline.js';
import { ReconcileError } from './error.js';
import { checkGitEntries, nulList, runGit } from './git.js';
import { listProject } from './listing.js';
import { compareRaw, nativePath, rawPath, writtenByTally } from './paths.js';

/** Files hashed at most per snapshot unless the caller says otherwise; the rest are counted. */
export const DEFAULT_FILE_LIMIT = 100_000;

export interface Listing {
  /** Raw paths, in byte order, at most `limit` of them. */
  paths: string[];
  /** Paths past the limit, not listed. */
  skipped: number;
  /** When paths were left out: the bound of the listing; no path after it was looked at. */
  last?: string;
  /** Folders that could not be listed. */
  unreadable: Unreadable[];
  /** In git: the nested repositories found and not listed (their files are not known). */
  unlisted?: string[];
}

/** The first `limit` of `sorted` (raw, unique, byte order); `last`, when some were left out, is the last kept. */
export function bounded(sorted: readonly string[], limit: number): Omit<Listing, 'unreadable' | 'unlisted'> {
  const paths = sorted.slice(0, limit);
  const out: Omit<Listing, 'unreadable' | 'unlisted'> = { paths, skipped: sorted.length - paths.length };
  if (out.skipped > 0 && paths.length > 0) out.last = paths.at(-1)!;
  return out;
}

/** The earlier of two listings' bounds (the last path a limit kept): nothing after it is known to both. */
export function minBound(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a < b ? a : b;
}

/**
 * The files and symbolic links under `root/from` (`''`: the whole tree), in byte order of their
 * paths (a folder's entries sorted with a `/` after each folder's name), so which files a limit
 * keeps depends only on the tree; `leaveOut(rel, folder)` leaves a path out. Raw paths relative to
 * `root`; at most `limit`, the rest counted; folders that cannot be listed are reported.
 */
export function walkFiles(
  root: string,
  from: string,
  limit: number,
  leaveOut: (rel: string, folder: boolean) => boolean,
): Listing {
  const paths: string[] = [];
  const unreadable: Unreadable[] = [];
  let skipped = 0;
  const slash = Buffer.from('/');
  const walk = (dir: Buffer, prefix: string): void => {
    let entries: import('node:fs').Dirent<Buffer>[];
    try {
      entries = readdirSync(dir, { withFileTypes: true, encoding: 'buffer' });
    } catch (error) {
      const code = unreadableCode(error);
      if (code !== null) unreadable.push({ raw: prefix, code, folder: true });
      return;
    }
    const keyed = entries.map((entry) => ({
      entry,
      key: entry.isDirectory() ? Buffer.concat([entry.name, slash]) : entry.name,
    }));
    keyed.sort((a, b) => Buffer.compare(a.key, b.key));
    for (const { entry } of keyed) {
      const name = rawPath(entry.name);
      const rel = prefix === '' ? name : `${prefix}/${name}`;
      if (entry.isDirectory()) {
        if (!leaveOut(rel, true)) walk(Buffer.concat([dir, slash, entry.name]), rel);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && !leaveOut(rel, false)) {
        if (paths.length < limit) paths.push(rel);
        else skipped++;
      }
    }
  };
  walk(from === '' ? Buffer.from(root, 'utf8') : nativePath(root, from), from);
  const listing: Listing = { paths, skipped, unreadable };
  if (skipped > 0 && paths.length > 0) listing.last = paths.at(-1)!;
  return listing;
}

/** Outside git: git's folder and what Tally writes under `.tally/` are not the project's files. */
function outsideGit(rel: string): boolean {
  return rel === '.git' || writtenByTally(rel);
}

/**
 * Every file of the tree: in a repository, what Tally's own listing shows (`.gitignore` respected,
 * repositories nested in it listed too) and every path the index names; outside one, every file
 * under `root` but git's folder. Symbolic links are not followed; what Tally writes under
 * `.tally/` during a session is left out.
 */
export async function listTree(
  root: string,
  inGit: boolean,
  limit = DEFAULT_FILE_LIMIT,
  deadline: Deadline = deadlineAfter(),
): Promise<Listing> {
  if (!inGit) return walkFiles(root, '', limit, outsideGit);
  checkGitEntries(root, deadline);
  const [tree, index] = await Promise.all([
    listProject(root, deadline),
    runGit(root, ['ls-files', '-z', '--cached'], deadline),
  ]);
  const all = new Set(tree.files);
  for (const raw of nulList(index.stdout)) if (plainPath(raw) && !writtenByTally(raw)) all.add(raw);
  const listing = bounded([...all].sort(compareRaw), limit);
  return {
    ...listing,
    skipped: listing.skipped + tree.unlisted.length,
    unreadable: tree.unreadable,
    unlisted: tree.unlisted,
  };
}

/** A relative path git could hold: an index entry naming anything else is not looked at. */
export function plainPath(raw: string): boolean {
  return !raw.startsWith('/') && !NOT_PLAIN.test(raw);
}

/** An empty, `.` or `..` part of a path. */
const NOT_PLAIN = /(?:^|\/)(?:\.\.?)?(?:\/|$)/;

export interface TreeSnapshot {
  /** Raw path → identity. */
  files: Map<string, FileIdentity>;
  /** Raw path → error code: files there whose content could not be read. */
  unread: Map<string, string>;
  /** Folders that could not be listed. */
  folders: Unreadable[];
  skipped: number;
  limit: number;
  /** When the limit cut the listing: the last path it holds. */
  last?: string;
  /** In git: the nested repositories the listing found and did not list; what they hold is not known. */
  unlisted?: string[];
}

/**
 * Every listed file with its identity: what `wrap` and reconciliation outside git compare. `known`:
 * paths an earlier snapshot held; one the listing does not show now (under a folder that cannot be
 * listed — one that can be searched but not read still lets it be read —, or ignored by a
 * `.gitignore` changed since) is looked at by its path, up to where the listing reaches, so that
 * a file still there is not taken as deleted. A file not read whole by `deadline` is unreadable
 * (`timeout`) and cuts the snapshot there, as the limit does: later paths are counted, not read.
 */
export async function snapshotTree(
  root: string,
  inGit: boolean,
  limit = DEFAULT_FILE_LIMIT,
  options: { format?: 'sha1' | 'sha256'; deadline?: Deadline; known?: Iterable<string> } = {},
): Promise<TreeSnapshot> {
  const listing = await listTree(root, inGit, limit, options.deadline);
  if (options.known !== undefined) {
    const listed = new Set(listing.paths);
    const last = listing.last;
    for (const raw of options.known)
      if (!listed.has(raw) && (last === undefined || raw <= last)) listing.paths.push(raw);
    listing.paths.sort(compareRaw);
  }
  const format = options.format ?? 'sha1';
  const snapshot: TreeSnapshot = {
    files: new Map(),
    unread: new Map(),
    folders: listing.unreadable,
    skipped: listing.skipped,
    limit,
  };
  if (listing.last !== undefined) snapshot.last = listing.last;
  if (listing.unlisted !== undefined && listing.unlisted.length > 0) snapshot.unlisted = listing.unlisted;
  const folders = new LeadingFolders(root);
  for (const [i, raw] of listing.paths.entries()) {
    const id = identify(root, raw, format, folders, options.deadline?.at);
    if (isUnread(id)) snapshot.unread.set(raw, id.unreadable);
    else if (id !== null) snapshot.files.set(raw, id);
    if (isUnread(id) && id.unreadable === TIMEOUT) {
      // The pass's time is up: the listing is cut here, as by the limit, the rest counted.
      const rest = listing.paths.length - i - 1;
      if (rest > 0) {
        snapshot.last = raw;
        snapshot.skipped += rest;
      }
      break;
    }
  }
  return snapshot;
}

const b64 = (raw: string) => Buffer.from(raw, 'latin1').toString('base64');
const ofB64 = (text: string) => rawPath(Buffer.from(text, 'base64'));

/** A snapshot as JSON (kept beside the session, its digest in the signed start record). */
export function snapshotJson(snapshot: TreeSnapshot): Record<string, unknown> {
  const out: Record<string, unknown> = {
    limit: snapshot.limit,
    skipped: snapshot.skipped,
    files: [...snapshot.files.entries()].map(([raw, id]) => [b64(raw), id.sha256, id.blob]),
  };
  if (snapshot.last !== undefined) out.last = b64(snapshot.last);
  if (snapshot.unread.size > 0) out.unread = [...snapshot.unread].map(([raw, code]) => [b64(raw), code]);
  if (snapshot.folders.length > 0) out.folders = snapshot.folders.map((f) => [b64(f.raw), f.code]);
  return out;
}

function pairs(value: unknown, field: string): [string, string][] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw badSnapshot(field, 'is not a list');
  return value.map((entry, i) => {
    if (!Array.isArray(entry) || entry.length !== 2 || !entry.every((x) => typeof x === 'string'))
      throw badSnapshot(`${field}/${i}`, 'is not [path, code]');
    return [ofB64(entry[0] as string), entry[1] as string];
  });
}

function badSnapshot(field: string, message: string): ReconcileError {
  return new ReconcileError('baseline', `the tree baseline's ${field} ${message}`, { field });
}

export function snapshotOfJson(value: unknown): TreeSnapshot {
  const v = value as Record<string, unknown> | null;
  if (typeof v?.limit !== 'number' || typeof v.skipped !== 'number' || !Array.isArray(v.files))
    throw new ReconcileError('baseline', 'the tree baseline is not a snapshot', { field: 'files' });
  if (v.last !== undefined && typeof v.last !== 'string') throw badSnapshot('last', 'is not a path');
  const files = new Map<string, FileIdentity>();
  for (const [i, entry] of v.files.entries()) {
    if (!Array.isArray(entry) || entry.length !== 3 || !entry.every((x) => typeof x === 'string'))
      throw badSnapshot(`files/${i}`, 'is not [path, sha256, blob]');
    const [path, sha, blob] = entry as [string, string, string];
    files.set(ofB64(path), { sha256: sha, blob });
  }
  const snapshot: TreeSnapshot = {
    files,
    unread: new Map(pairs(v.unread, 'unread')),
    folders: pairs(v.folders, 'folders').map(([raw, code]) => ({ raw, code, folder: true })),
    skipped: v.skipped,
    limit: v.limit,
  };
  if (typeof v.last === 'string') snapshot.last = ofB64(v.last);
  return snapshot;
}
