/**
 * A place a `.git` file, a `.git` link or a `commondir` names, resolved as git resolves it: git
 * joins a relative `commondir` to the git directory and takes the real path of the whole, one
 * component at a time, each link replaced by where it leads. So a `..` after a link goes up from
 * the link's target, not back to the folder holding the link, as it would if the written path were
 * tidied by its text. The agent writes the `.git` file, the `commondir` and the links: read by its
 * text, `<link>/../..` is one folder and git's hooks are in another, and a hook planted there would
 * be in no receipt. It also chooses how long the walk is: each component is looked up by the whole
 * path so far, as git looks it up, so 64 KiB of steps through folders 2,000 deep take seconds of
 * the kernel's time. The text is walked once, a look-up a component, and the walk stops at the
 * pass's deadline.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import type { Deadline } from './deadline.js';
import { ReconcileError } from './error.js';
import { pathOut } from './paths.js';

/** The most links git follows on one path: at the next one it stops. */
const LINKS_FOLLOWED = 33;

/** `/`, as a char code. */
const SLASH = 0x2f;

/** The most of a path a timeout's message quotes: a `commondir` can be 64 KiB. */
const SHOWN = 200;

/**
 * Text still to walk, and how far into it the walk has come: the path itself, or the target of a
 * link, which takes the link's place ahead of the rest. Walked where it lies, never copied or
 * joined to what follows it; one walked to its end is dropped at once, so none is left exactly
 * when no component is.
 */
interface Pending {
  text: string;
  at: number;
}

/** The next component still to walk (empty ones skipped), or undefined when none is left. */
function nextName(pending: Pending[]): string | undefined {
  for (;;) {
    const top = pending.at(-1);
    if (top === undefined) return undefined;
    const { text } = top;
    let from = top.at;
    while (text.charCodeAt(from) === SLASH) from++;
    if (from === text.length) {
      pending.pop();
      continue;
    }
    const cut = text.indexOf('/', from);
    const end = cut === -1 ? text.length : cut;
    if (end === text.length) pending.pop();
    else top.at = end;
    return text.slice(from, end);
  }
}

/** The folder holding a resolved absolute path; the root holds itself. */
function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

/** The errno code of a failed file-system call. */
function codeOf(error: unknown): unknown {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** The pass stops at its deadline here as at a git command: a `timeout` that fails it. */
function timedOut(raw: string, deadline: Deadline): ReconcileError {
  const shown = `${pathOut(raw.slice(0, SHOWN)).path}${raw.length > SHOWN ? '…' : ''}`;
  return new ReconcileError(
    'timeout',
    `resolving ${shown} (${raw.length} bytes) did not finish within the pass's ${deadline.ms} ms and was stopped (the pass's time is shared by all it does: many nested repositories, or a place of many steps through deep folders)`,
    { path: shown, timeout_ms: deadline.ms },
  );
}

/** One place resolved: where it leads (undefined where git stops), and how many components were looked up. */
export interface Resolution {
  place: string | undefined;
  lookups: number;
}

/**
 * `raw` (absolute, a latin1 string of its bytes) as git resolves it, or undefined where git stops
 * with an error instead: a component missing before the last, one that cannot be looked at, a link
 * that cannot be read, too many links. Where git goes on the path goes on, though the kernel would
 * not: `..` after a file drops the file's name, and a path longer than the kernel takes is walked
 * a component at a time. Past the pass's deadline a `timeout` ReconcileError.
 */
export function gitRealPath(raw: string, deadline: Deadline): string | undefined {
  return gitResolution(raw, deadline).place;
}

/**
 * `gitRealPath`, and the look-ups it took: one a component that is not `.` or `..`, of the path
 * and of the links' targets, each looked up once. Each look-up is of the whole path so far, as
 * git's are, so the kernel walks it again: the deadline is checked before each.
 */
export function gitResolution(raw: string, deadline: Deadline): Resolution {
  let lookups = 0;
  const stop = (place: string | undefined): Resolution => ({ place, lookups });
  if (!raw.startsWith('/')) return stop(undefined);
  let resolved = '/';
  const pending: Pending[] = [{ text: raw, at: 0 }];
  let links = 0;
  for (let name = nextName(pending); name !== undefined; name = nextName(pending)) {
    if (name === '.') continue;
    if (name === '..') {
      resolved = parentOf(resolved);
      continue;
    }
    if (Date.now() >= deadline.at) throw timedOut(raw, deadline);
    const next = resolved === '/' ? `/${name}` : `${resolved}/${name}`;
    let isLink: boolean;
    try {
      lookups++;
      isLink = lstatSync(Buffer.from(next, 'latin1')).isSymbolicLink();
    } catch (error) {
      // Only the last component may be missing: git names a place that is not there yet.
      if (codeOf(error) !== 'ENOENT' || pending.length !== 0) return stop(undefined);
      isLink = false;
    }
    if (!isLink) {
      resolved = next;
      continue;
    }
    if (++links > LINKS_FOLLOWED) return stop(undefined);
    let target: string;
    try {
      target = readlinkSync(Buffer.from(next, 'latin1'), { encoding: 'buffer' }).toString('latin1');
    } catch {
      return stop(undefined);
    }
    // The link's target takes its place: from the root when absolute, else from the link's folder.
    if (target.startsWith('/')) resolved = '/';
    if (target !== '') pending.push({ text: target, at: 0 });
  }
  return stop(resolved);
}
