/**
 * The settings git runs a repository with, as git reads them at each pass. Many of them run a
 * program: `core.fsmonitor` at every `git status`, a filter's `clean` and `smudge`, a diff's
 * `textconv`, `core.pager`, `core.sshCommand`, an alias beginning with `!`. They can come from
 * files no row watches: the user's own `~/.gitconfig`, the system's, or a file any config includes
 * (`include.path`, `includeIf`), anywhere on the disk and hidden from the listing by a
 * `.gitignore`. The agent can write any of those. So each pass asks git for every setting in effect
 * (`git config --list`, includes followed, in the repository's work tree), and the digest of those
 * that do not come from the repository's own config is watched as `<marker>/config-in-effect`: a
 * setting added, changed or removed there is a `modified` row. The repository's own `config` and
 * `config.worktree` are rows of their own, so what git read from them, when they are regular files,
 * is left out here: a change to them is one row, not two. Only the digest is recorded (the
 * settings can hold credentials); what changed is for `git config --list --show-origin` to say.
 */
import { lstatSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { identityOf } from './content.js';
import type { Deadline } from './deadline.js';
import { ReconcileError } from './error.js';
import { placeNow, runGit } from './git.js';
import { type GitRepository, worktreeOf } from './git-state.js';
import { rawOfText, rawPath } from './paths.js';

/**
 * Sets each repository's `settings`: the identity of the settings git reads for it beyond its own
 * config files, as git lists them now. A repository git will not run in (its config does not parse,
 * its `.git` names no repository) has none: a row says the settings went, beside the row of the
 * file that broke them. A pass past its deadline stops here, as at any git command.
 */
export async function readSettings(
  root: string,
  repositories: readonly GitRepository[],
  format: 'sha1' | 'sha256',
  deadline: Deadline,
): Promise<void> {
  for (const repository of repositories) {
    const worktree = worktreeOf(root, repository.marker);
    let out: Buffer;
    try {
      out = (await runGit(worktree, ['config', '--list', '--show-origin', '-z'], deadline)).stdout;
    } catch (error) {
      if (error instanceof ReconcileError && error.code === 'git') continue;
      throw error;
    }
    repository.settings = identityOf(
      inEffect(out, rawOfText(worktree), ownConfig(repository, deadline), deadline),
      format,
    );
  }
}

/** The real places of the repository's own config files that are regular files (rows of their own). */
function ownConfig(repository: GitRepository, deadline: Deadline): Set<string> {
  const own = new Set<string>();
  for (const place of [`${repository.at.common}/config`, `${repository.at.dir}/config.worktree`]) {
    if (isFile(place)) own.add(placeNow(place, deadline));
  }
  return own;
}

/** Whether a raw place is a regular file (not there, or not to be looked at: no). */
function isFile(place: string): boolean {
  try {
    return lstatSync(Buffer.from(place, 'latin1'), { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/**
 * `git config --list --show-origin -z` (an origin, then `key\nvalue` or a bare `key`, each ended by
 * a NUL), kept in git's order as `key\nvalue\0`: every setting whose origin is not one of `own` nor
 * the command line (Tally's own `-c` options, and its process's environment, not the repository's).
 */
function inEffect(out: Buffer, worktree: string, own: ReadonlySet<string>, deadline: Deadline): Buffer {
  const kept: Buffer[] = [];
  let at = 0;
  while (at < out.length) {
    const originEnd = out.indexOf(0, at);
    const entryEnd = originEnd < 0 ? -1 : out.indexOf(0, originEnd + 1);
    if (entryEnd < 0) break;
    const origin = rawPath(out.subarray(at, originEnd));
    if (!origin.startsWith('command line:') && !own.has(originPlace(origin, worktree, deadline)))
      kept.push(out.subarray(originEnd + 1, entryEnd + 1));
    at = entryEnd + 1;
  }
  return Buffer.concat(kept);
}

/** The real place of a `file:` origin (relative to the work tree, where git ran), else the origin itself. */
function originPlace(origin: string, worktree: string, deadline: Deadline): string {
  if (!origin.startsWith('file:')) return origin;
  const path = origin.slice('file:'.length);
  return placeNow(isAbsolute(path) ? path : `${worktree}/${path}`, deadline);
}
