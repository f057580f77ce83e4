/**
 * A place a `.git` file, a `.git` link or a `commondir` names, resolved as git resolves it: git
 * joins a relative `commondir` to the git directory and takes the real path of the whole, one
 * component at a time, each link replaced by where it leads. So a `..` after a link goes up from
 * the link's target, not back to the folder holding the link, as it would if the written path were
 * tidied by its text. The agent writes the `.git` file, the `commondir` and the links: read by its
 * text, `<link>/../..` is one folder and git's hooks are in another, and a hook planted there would
 * be in no receipt.
 */
import { lstatSync, readlinkSync } from 'node:fs';

/** The most links git follows on one path: at the next one it stops. */
const LINKS_FOLLOWED = 33;

/** The folder holding a resolved absolute path; the root holds itself. */
function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

/** The errno code of a failed file-system call. */
function codeOf(error: unknown): unknown {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * `raw` (absolute, a latin1 string of its bytes) as git resolves it, or undefined where git stops
 * with an error instead: a component missing before the last, one that cannot be looked at, a link
 * that cannot be read, too many links. Where git goes on the path goes on, though the kernel would
 * not: `..` after a file drops the file's name, and a path longer than the kernel takes is walked
 * a component at a time.
 */
export function gitRealPath(raw: string): string | undefined {
  if (!raw.startsWith('/')) return undefined;
  let resolved = '/';
  let remaining = raw;
  let links = 0;
  for (;;) {
    const from = remaining.search(/[^/]/);
    if (from === -1) return resolved;
    const end = remaining.indexOf('/', from);
    const name = end === -1 ? remaining.slice(from) : remaining.slice(from, end);
    remaining = end === -1 ? '' : remaining.slice(end);
    if (name === '.') continue;
    if (name === '..') {
      resolved = parentOf(resolved);
      continue;
    }
    const next = resolved === '/' ? `/${name}` : `${resolved}/${name}`;
    let isLink: boolean;
    try {
      isLink = lstatSync(Buffer.from(next, 'latin1')).isSymbolicLink();
    } catch (error) {
      // Only the last component may be missing: git names a place that is not there yet.
      if (codeOf(error) !== 'ENOENT' || remaining !== '') return undefined;
      isLink = false;
    }
    if (!isLink) {
      resolved = next;
      continue;
    }
    if (++links > LINKS_FOLLOWED) return undefined;
    let target: string;
    try {
      target = readlinkSync(Buffer.from(next, 'latin1'), { encoding: 'buffer' }).toString('latin1');
    } catch {
      return undefined;
    }
    // The link's target takes its place: from the root when absolute, else from the link's folder.
    if (target.startsWith('/')) resolved = '/';
    remaining = remaining === '' ? target : `${target}/${remaining}`;
  }
}
