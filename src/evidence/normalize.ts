/**
 * Normalisation shared by the receipt composer: paths (so one file is one row whatever channel saw
 * it), the workspace frame a session records at its start, content digests, file operations, and
 * the machine-independent orderings the receipt relies on. Pure functions; no I/O, no clock.
 */

import { digest, isDigest } from '../core/hash.js';
import { isJsonObject } from '../core/json.js';
import type { EventRecord } from './record/record.js';

/** Extension keys Tally defines under its own reverse-DNS namespace (documented in docs/receipt.md). */
export const EXT_WORKSPACE = 'dev.tally.workspace';
export const EXT_CHANGES = 'dev.tally.changes';
export const EXT_PROCESS = 'dev.tally.process';
/** Why an adapter could not read what or where a call runs (a string): the call is judged as opaque. */
export const EXT_OPAQUE = 'dev.tally.opaque';
/** Tally's own event type for a network connection seen outside a tool call. */
export const NETWORK_EVENT_TYPE = 'dev.tally.network.connect';

export type FileOperation = 'created' | 'modified' | 'deleted' | 'renamed' | 'written';

export function stringField(value: unknown, key: string): string | undefined {
  if (!isJsonObject(value)) return undefined;
  const field = value[key];
  return typeof field === 'string' && field !== '' ? field : undefined;
}

export function countField(value: unknown, key: string): number | undefined {
  if (!isJsonObject(value)) return undefined;
  const field = value[key];
  return typeof field === 'number' && Number.isSafeInteger(field) && field >= 0 ? field : undefined;
}

/** Orders strings by UTF-16 code units — never by locale — so every machine sorts alike. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareCodeUnits);
}

/** Cuts at a code-point boundary, so a surrogate pair is never split into an unencodable half. */
export function truncate(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}

// ---------------------------------------------------------------------------------------------
// Paths

const DRIVE = /^[A-Za-z]:\//;

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || DRIVE.test(path);
}

/**
 * Backslashes become slashes, `.` and empty segments vanish, `..` pops a segment (never above the
 * root of an absolute path), a Windows drive letter is upper-cased. A relative path keeps the `..`
 * segments it cannot resolve.
 */
export function cleanPath(raw: string): string {
  const slashed = raw.replaceAll('\\', '/');
  let prefix = '';
  let rest = slashed;
  if (DRIVE.test(slashed)) {
    prefix = `${slashed.charAt(0).toUpperCase()}:/`;
    rest = slashed.slice(3);
  } else if (slashed.startsWith('/')) {
    prefix = '/';
    rest = slashed.slice(1);
  }
  const out: string[] = [];
  for (const segment of rest.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (prefix === '') out.push('..');
      continue;
    }
    out.push(segment);
  }
  const joined = out.join('/');
  if (prefix !== '') return prefix + joined;
  return joined === '' ? '.' : joined;
}

/** Where the agents' control plane lies, as a session's start recorded it (docs/policy.md). */
export interface ControlPlanePlaces {
  /** The user's home and Tally's. */
  home?: string;
  tallyHome?: string;
  /** The session's start was recorded before the control plane was judged. */
  beforeControlPlane?: boolean;
}

/** Where a session runs: the repository root and the agent's working directory, both absolute. */
export interface WorkspaceFrame extends ControlPlanePlaces {
  root?: string;
  cwd?: string;
}

/** The control-plane places of a frame (or of a call), and nothing else of it. */
export function controlPlanePlaces(from: ControlPlanePlaces): ControlPlanePlaces {
  return {
    ...(from.home ? { home: from.home } : {}),
    ...(from.tallyHome ? { tallyHome: from.tallyHome } : {}),
    ...(from.beforeControlPlane ? { beforeControlPlane: true } : {}),
  };
}

/**
 * The frame for reports that name files relative to the repository (a reconcile pass, a baseline,
 * `file.changed`): relative paths resolve against the root, not the agent's cwd.
 */
export function rootFrame(frame: WorkspaceFrame): WorkspaceFrame {
  return frame.root === undefined ? {} : { root: frame.root };
}

export interface NormalPath {
  /** Repo-relative POSIX path, or an absolute POSIX-style path when it is outside the root. */
  path: string;
  /** True when a root is known and the path is not under it. */
  outside: boolean;
}

/**
 * Relative paths are resolved against the event's own `session.cwd`, else the session's cwd, else
 * the root; the result is made repo-relative when under the root and kept absolute (flagged) when
 * not. Without a known root, relative paths are taken as repo-relative and absolute ones stay as
 * they are, unflagged: nothing can be said about them.
 */
export function normalizePath(raw: string, frame: WorkspaceFrame, eventCwd?: string): NormalPath | undefined {
  if (raw === '') return undefined;
  const cleaned = cleanPath(raw);
  const base = eventCwd !== undefined && isAbsolute(cleanPath(eventCwd)) ? cleanPath(eventCwd) : frame.cwd;
  let absolute: string | undefined;
  if (isAbsolute(cleaned)) absolute = cleaned;
  else if (base !== undefined) absolute = cleanPath(`${base}/${cleaned}`);
  else if (frame.root !== undefined) absolute = cleanPath(`${frame.root}/${cleaned}`);
  const root = frame.root;
  if (absolute === undefined) return { path: cleaned, outside: false };
  if (root === undefined) return { path: absolute, outside: false };
  if (absolute === root) return { path: '.', outside: false };
  const prefix = root.endsWith('/') ? root : `${root}/`;
  if (absolute.startsWith(prefix)) return { path: absolute.slice(prefix.length), outside: false };
  return { path: absolute, outside: true };
}

/** The workspace a session recorded at its start, and its baseline of already-dirty files. */
export interface SessionWorkspace {
  frame: WorkspaceFrame;
  /** Commit the working tree was at when the session started, when recorded. */
  baselineCommit?: string;
  /** Repo-relative path → content digest (null: absent) of files already dirty at the start. */
  baselineDirty: Map<string, string | null>;
}

function absoluteOrUndefined(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const cleaned = cleanPath(value);
  return isAbsolute(cleaned) ? cleaned : undefined;
}

/**
 * Read from the first `session.start` event: the root is `extensions["dev.tally.workspace"].root`,
 * else the first of `session.workspaceRoots`, else `session.cwd`; the cwd is `session.cwd`.
 */
export function sessionWorkspace(records: readonly EventRecord[]): SessionWorkspace {
  const start = records.find((r) => r.event.type === 'session.start')?.event;
  const result: SessionWorkspace = { frame: {}, baselineDirty: new Map() };
  if (start === undefined) return result;
  const extension = isJsonObject(start.extensions) ? start.extensions[EXT_WORKSPACE] : undefined;
  const session = start.session;
  const roots = isJsonObject(session) && Array.isArray(session.workspaceRoots) ? session.workspaceRoots : [];
  const firstRoot = typeof roots[0] === 'string' ? roots[0] : undefined;
  const root = absoluteOrUndefined(
    stringField(extension, 'root') ?? firstRoot ?? stringField(session, 'cwd'),
  );
  const cwd = absoluteOrUndefined(stringField(session, 'cwd'));
  if (root !== undefined) result.frame.root = root;
  if (cwd !== undefined) result.frame.cwd = cwd;
  const home = absoluteOrUndefined(stringField(extension, 'home'));
  const tallyHome = absoluteOrUndefined(stringField(extension, 'tally_home'));
  if (home !== undefined) result.frame.home = home;
  // Tally's own start names the homes since the control plane is judged; one that does not is older.
  else if (isJsonObject(extension)) result.frame.beforeControlPlane = true;
  if (tallyHome !== undefined) result.frame.tallyHome = tallyHome;
  const baseline = isJsonObject(extension) ? extension.baseline : undefined;
  const commit = stringField(baseline, 'commit');
  if (commit !== undefined) result.baselineCommit = commit;
  const dirty = isJsonObject(baseline) ? baseline.dirty : undefined;
  if (isJsonObject(dirty)) {
    for (const key of Object.keys(dirty).sort(compareCodeUnits)) {
      const value = dirty[key];
      const normal = normalizePath(key, rootFrame(result.frame));
      if (normal === undefined) continue;
      if (value === null || isDigest(value)) result.baselineDirty.set(normal.path, value);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// File content and operations

/**
 * The digest of an AHP content part when the part carries the whole text inline (a text part with
 * `selection: "body"`). Other parts (attachments by reference, metadata, omissions) give none.
 */
export function contentDigest(part: unknown): string | undefined {
  if (!isJsonObject(part)) return undefined;
  if (part.kind !== 'text' || part.selection !== 'body' || typeof part.text !== 'string') return undefined;
  return digest(part.text);
}

/** `file.changed` operations (create/update/remove) in receipt terms. */
export function fileChangedOperation(value: unknown): FileOperation | undefined {
  if (value === 'create') return 'created';
  if (value === 'update') return 'modified';
  if (value === 'remove') return 'deleted';
  return undefined;
}

/** `tool.after` `fileChanges[].change` (created/modified/deleted/moved) in receipt terms. */
export function toolFileChangeOperation(value: unknown): FileOperation | undefined {
  if (value === 'created' || value === 'modified' || value === 'deleted') return value;
  if (value === 'moved') return 'renamed';
  return undefined;
}

/** Facts about one changed path that Tally's own channels add under `extensions["dev.tally.changes"]`. */
export interface ChangeFacts {
  from?: string;
  before?: string;
  after?: string;
  additions?: number;
  deletions?: number;
}

export function changeFacts(event: Record<string, unknown>, rawPath: string): ChangeFacts {
  const extensions = isJsonObject(event.extensions) ? event.extensions[EXT_CHANGES] : undefined;
  const entry =
    isJsonObject(extensions) && Object.hasOwn(extensions, rawPath) ? extensions[rawPath] : undefined;
  if (!isJsonObject(entry)) return {};
  const facts: ChangeFacts = {};
  const from = stringField(entry, 'from');
  if (from !== undefined) facts.from = from;
  if (isDigest(entry.before)) facts.before = entry.before;
  if (isDigest(entry.after)) facts.after = entry.after;
  const additions = countField(entry, 'additions');
  if (additions !== undefined) facts.additions = additions;
  const deletions = countField(entry, 'deletions');
  if (deletions !== undefined) facts.deletions = deletions;
  return facts;
}
