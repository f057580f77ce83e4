/**
 * Tally's own stat snapshot of a git working tree at the start of a session: for every file, its
 * size, modification and change times, inode and mode, and its blob id as the index holds it
 * before the agent runs (the start commit's, for a file git finds clean). The close content-hashes
 * only the files whose stat differs: writing a file sets its change time (ctime) to the clock's
 * time, and no program can set a ctime back short of changing the system clock, so a file whose
 * stat is as it was still holds what it held.
 * A file changed too shortly before the snapshot for that to hold (its ctime within `RECENT_MS` of
 * it, or later) is compared by content at the close whatever its stat says.
 */
import { lstatSync, type Stats } from 'node:fs';
import { LeadingFolders, unreadableCode } from './content.js';
import { ReconcileError } from './error.js';
import { isUtf8, NESTED_LISTED } from './listing.js';
import { compareRaw, nativePath } from './paths.js';
import { bounded } from './workspace.js';

/** size, modification time (ms), change time (ms), inode, mode: what `lstat` says of a file. */
export type FileStat = readonly [number, number, number, number, number];

export interface StatEntry {
  /** null: changed too shortly before the snapshot for its stat to vouch for its content. */
  stat: FileStat | null;
  /** Its blob id in the index at the start, when the index has it. */
  blob?: string;
}

export interface StatSnapshot {
  /** Raw path → entry, for every file present at the start (in byte order). */
  files: Map<string, StatEntry>;
  /** Folders holding a repository of their own at the start (listed like the tree). */
  nested: Set<string>;
  /**
   * Every `.git` below the top at the start (`<folder>/.git`); the close reports one that appears
   * or goes. Absent in a snapshot an earlier version took: its nested repositories were not listed.
   */
  markers?: string[];
  limit: number;
  /** Paths of the start past the limit, not in the snapshot, and nested repositories not listed. */
  skipped: number;
  /** When the limit left paths out: the close compares none after it. */
  last?: string;
  /**
   * Nested repositories the start found and did not list (past `NESTED_LISTED`, or a name git
   * cannot be given): a file under one that the snapshot does not hold is not known, and is not
   * compared. A snapshot an earlier version took did not keep them (the first of them was its
   * `last`, when nothing else cut it): read back, they are worked out from `nested`.
   */
  unlisted?: string[];
}

/**
 * How recent a ctime may be and still vouch for the content: above the lag of the kernel's coarse
 * clock behind the wall clock, and above a one-second timestamp granularity.
 */
export const RECENT_MS = 1000;

const ASCII = /^[\x20-\x7e]*$/;

/**
 * The stat of a regular file or symbolic link at `root/raw`: undefined when there is none (or a
 * folder on the way is now a symbolic link), null when it could not be taken (a folder on the way
 * cannot be searched): nothing vouches for it.
 */
export function statOf(root: string, raw: string, folders: LeadingFolders): FileStat | undefined | null {
  if (!folders.plain(raw)) return undefined;
  let stat: Stats | undefined;
  try {
    stat = lstatSync(ASCII.test(raw) ? `${root}/${raw}` : nativePath(root, raw), { throwIfNoEntry: false });
  } catch (error) {
    return unreadableCode(error) === null ? undefined : null; // ENOTDIR: a folder on the way is now a file
  }
  if (stat === undefined || !(stat.isFile() || stat.isSymbolicLink())) return undefined;
  return [stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino, stat.mode];
}

export function sameStat(a: FileStat, b: FileStat): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4];
}

/**
 * The snapshot of `paths` (raw, sorted, unique): the first `limit` of them are looked at; `blobs`
 * are the index's at the start; `tree.unlisted`: the nested repositories the listing left out.
 * `since`: a time (ms) no later than the first stat taken and than git's look for dirty files — a
 * file whose ctime is not `RECENT_MS` older, or whose stat could not be taken, has no stat here.
 */
export function takeStatSnapshot(
  root: string,
  paths: readonly string[],
  tree: { nested: readonly string[]; markers: readonly string[]; unlisted: readonly string[] },
  blobs: ReadonlyMap<string, string>,
  limit: number,
  since: number,
): StatSnapshot {
  const kept = bounded(paths, limit);
  const recent = since - RECENT_MS;
  const files = new Map<string, StatEntry>();
  const folders = new LeadingFolders(root);
  for (const raw of kept.paths) {
    const stat = statOf(root, raw, folders);
    if (stat === undefined) continue;
    const entry: StatEntry = { stat: stat === null || stat[2] >= recent ? null : stat };
    const blob = blobs.get(raw);
    if (blob !== undefined) entry.blob = blob;
    files.set(raw, entry);
  }
  const snapshot: StatSnapshot = {
    files,
    nested: new Set(tree.nested),
    markers: [...tree.markers],
    limit,
    skipped: kept.skipped + tree.unlisted.length,
    unlisted: [...tree.unlisted].sort(compareRaw),
  };
  if (kept.last !== undefined) snapshot.last = kept.last;
  return snapshot;
}

/**
 * The snapshot as kept beside the session (its digest is in the signed start record). A path is
 * written as its raw form, one character per byte of its name, so any name survives as it is.
 */
export function statJson(snapshot: StatSnapshot): Record<string, unknown> {
  const out: Record<string, unknown> = { limit: snapshot.limit, skipped: snapshot.skipped };
  if (snapshot.last !== undefined) out.last = snapshot.last;
  out.nested = [...snapshot.nested];
  if (snapshot.markers !== undefined) out.markers = snapshot.markers;
  if (snapshot.unlisted !== undefined) out.unlisted = snapshot.unlisted;
  out.files = [...snapshot.files].map(([raw, entry]) => [raw, entry.stat, entry.blob ?? null]);
  return out;
}

function bad(field: string, message: string): never {
  throw new ReconcileError('baseline', `the stat snapshot ${message}`, { field });
}

/** A raw path: one character per byte. */
function isRaw(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && /^[\x01-\xff]*$/.test(value);
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function statField(value: unknown, field: string): FileStat | null {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length !== 5 || !value.every((n) => Number.isFinite(n)))
    bad(field, 'has a stat that is not five numbers');
  return value as unknown as FileStat;
}

export function statOfJson(value: unknown): StatSnapshot {
  const v = value as Record<string, unknown> | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('', 'is not an object');
  if (!isCount(v.limit) || v.limit < 1) bad('limit', 'has no limit');
  if (!isCount(v.skipped)) bad('skipped', 'has no count of skipped paths');
  if (v.last !== undefined && !isRaw(v.last)) bad('last', 'names no last path');
  if (!Array.isArray(v.nested) || !v.nested.every(isRaw)) bad('nested', 'has no list of nested repositories');
  if (v.markers !== undefined && (!Array.isArray(v.markers) || !v.markers.every(isRaw)))
    bad('markers', 'has a list of .git entries that is not one of paths');
  if (v.unlisted !== undefined && (!Array.isArray(v.unlisted) || !v.unlisted.every(isRaw)))
    bad('unlisted', 'has a list of nested repositories not listed that is not one of paths');
  if (!Array.isArray(v.files)) bad('files', 'has no files');
  const files = new Map<string, StatEntry>();
  for (const [i, item] of (v.files as unknown[]).entries()) {
    const field = `files/${i}`;
    if (!Array.isArray(item) || item.length !== 3 || !isRaw(item[0]))
      bad(field, 'has an entry that is not [path, stat, blob]');
    const entry: StatEntry = { stat: statField(item[1], `${field}/1`) };
    if (typeof item[2] === 'string') entry.blob = item[2];
    else if (item[2] !== null) bad(`${field}/2`, 'has a blob id that is not a string');
    files.set(item[0], entry);
  }
  const snapshot: StatSnapshot = {
    files,
    nested: new Set(v.nested as string[]),
    limit: v.limit,
    skipped: v.skipped,
  };
  if (typeof v.last === 'string') snapshot.last = v.last;
  if (Array.isArray(v.markers)) snapshot.markers = v.markers as string[];
  snapshot.unlisted = Array.isArray(v.unlisted) ? (v.unlisted as string[]) : unlistedBefore(snapshot.nested);
  return snapshot;
}

/**
 * The nested repositories a snapshot an earlier version took did not list, which it did not keep:
 * its listing took them in the order `nested` keeps, and listed the first `NESTED_LISTED` whose
 * names are UTF-8.
 */
function unlistedBefore(nested: ReadonlySet<string>): string[] {
  const out: string[] = [];
  let listed = 0;
  for (const folder of nested) {
    if (listed < NESTED_LISTED && isUtf8(folder)) listed++;
    else out.push(folder);
  }
  return out.sort(compareRaw);
}
