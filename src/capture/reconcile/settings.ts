/**
 * The settings git runs a repository with, as git reads them at each pass. Many of them run a
 * program: `core.fsmonitor` at every `git status`, a filter's `clean` and `smudge`, a diff's
 * `textconv`, `core.pager`, `core.sshCommand`, an alias beginning with `!`. They can come from
 * files no row watches: the user's own `~/.gitconfig`, the system's, or a file any config includes
 * (`include.path`, `includeIf`), anywhere on the disk and hidden from the listing by a
 * `.gitignore`. The agent can write any of those. So each pass asks git for every setting in effect
 * (`git config --list`, includes followed, in the repository's work tree), and the digest of those
 * that do not come from the repository's own config is watched as `<marker>/config-in-effect`: a
 * setting added, changed or removed there is a `modified` row. git lists only the includes whose
 * condition holds now (`includeIf "onbranch:…"` on another branch reads nothing), so every file an
 * include names is hashed too, wherever it leads: a setting planted where git reads it only on the
 * next branch is a row all the same, and so is every file such a file includes in turn, to git's
 * own depth of includes (git reads none of them until the condition holds, so Tally reads them).
 * The repository's own `config` and `config.worktree` are rows of their own, so what git read from
 * them, when they are regular files, is left out here: a change to them is one row, not two. Only the digest is recorded (the
 * settings can hold credentials); what changed is for `git config --list --show-origin` to say.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import { eachAtOnce } from '../../core/at-once.js';
import type { ConfigPlaces } from '../../core/git.js';
import { identifyAt, identityOf, isUnread } from './content.js';
import type { Deadline } from './deadline.js';
import { ReconcileError } from './error.js';
import { GIT_AT_ONCE, gitEnv, placeNow, runGit } from './git.js';
import { askEach, type GitRepository } from './git-state.js';
import { rawOfText, rawPath } from './paths.js';

/**
 * Sets each repository's `settings`: the identity of the settings git reads for it beyond its own
 * config files, as git lists them now, and of every file a config names to include, whether its
 * condition holds now or not. A repository git will not run in (its config does not parse, its
 * `.git` names no repository) has none: a row says the settings went, beside the row of the file
 * that broke them. A pass past its deadline stops here, as at any git command.
 */
export async function readSettings(
  root: string,
  repositories: readonly GitRepository[],
  format: 'sha1' | 'sha256',
  deadline: Deadline,
  config: ConfigPlaces,
  followUnread = true,
): Promise<void> {
  const asked = ['config', '--list', '--show-origin', '-z'];
  const env = gitEnv(config);
  const home = rawOfText(config.HOME ?? homedir());
  // The files git does not read, read once a pass whichever repositories include them.
  const parsed = new Map<string, Promise<Buffer | null>>();
  await askEach(root, repositories, asked, deadline, env, async (repository, out, worktree) => {
    const places = new OriginPlaces(rawOfText(worktree), deadline);
    const own = ownConfig(repository, deadline);
    const kept: Buffer[] = [];
    const unread = new Includes(worktree, { format, deadline, env, home, parsed });
    for (const { origin, entry } of settingsOf(out)) {
      // Tally's own `-c` options and its process's environment are not the repository's.
      if (origin.startsWith('command line:')) continue;
      const place = places.of(origin);
      unread.readByGit(place);
      if (!own.has(place)) kept.push(entry, NUL);
      const included = includedFile(entry, places.path(origin), home);
      if (included !== undefined) kept.push(unread.line(included, 1));
    }
    // Files git did not read (a condition that does not hold now) are read here, after git's own
    // list: a repository without them keeps the digest an earlier version recorded, and a close
    // whose start an earlier version took (`followUnread` false) reads none, as that start did not.
    if (followUnread) kept.push(...(await unread.follow()));
    repository.settings = identityOf(Buffer.concat(kept), format);
  });
}

/**
 * git's own bound: a file included through more than ten others is an error, which stops every git
 * command of the repository (config.c, `MAX_INCLUDE_DEPTH`).
 */
const INCLUDE_DEPTH = 10;

/** The most included files of one repository that git did not read and Tally reads for it. */
const INCLUDES_READ = 100;

const NUL = Buffer.from([0]);

/** `include.path` and `includeIf.<condition>.path`: a file git reads as config where it applies. */
const INCLUDE = /^include(?:if\..*)?\.path$/s;

/**
 * `git config --list --show-origin -z`: an origin, then `key\nvalue` or a bare `key`, each ended by
 * a NUL, in git's order.
 */
function* settingsOf(out: Buffer): Generator<{ origin: string; entry: Buffer }> {
  let at = 0;
  for (;;) {
    const originEnd = out.indexOf(0, at);
    const entryEnd = originEnd < 0 ? -1 : out.indexOf(0, originEnd + 1);
    if (entryEnd < 0) return;
    yield { origin: rawPath(out.subarray(at, originEnd)), entry: out.subarray(originEnd + 1, entryEnd) };
    at = entryEnd + 1;
  }
}

/**
 * The file an include setting names, as git finds it (a relative path from the folder of the file
 * that names it, as git named that file; `~/` from the home folder), or undefined when the setting
 * is not an include or its origin is not a file.
 */
function includedFile(entry: Buffer, origin: string | undefined, home: string): string | undefined {
  const cut = entry.indexOf(0x0a);
  if (cut < 0 || !INCLUDE.test(rawPath(entry.subarray(0, cut)))) return undefined;
  if (origin === undefined) return undefined;
  const named = rawPath(entry.subarray(cut + 1));
  if (named.startsWith('~/')) return `${home}${named.slice(1)}`;
  return isAbsolute(named) ? named : `${origin.slice(0, origin.lastIndexOf('/'))}/${named}`;
}

/** A file an include names that git did not read, to be read: as named, where it leads, its content. */
interface Pending {
  named: string;
  place: string;
  depth: number;
  sha256: string;
}

/**
 * The files a repository's config includes. Each has a line of the settings: where it leads (links
 * followed, as git opens it) and what it holds there (absent, unreadable). One git did not read
 * (its condition does not hold now) is read here with git's own parser, `git config --file -
 * --no-includes`, for the files it includes in turn: they are what git reads once the condition
 * holds. A file is read once; past git's depth or `INCLUDES_READ` files, no further.
 */
class Includes {
  /** Places whose includes are known: git read them, or they were read here. */
  readonly #known = new Set<string>();
  /** Regular files named by an include that git did not read, with the depth they were named at. */
  readonly #pending: Pending[] = [];

  constructor(
    readonly worktree: string,
    readonly pass: {
      format: 'sha1' | 'sha256';
      deadline: Deadline;
      env: NodeJS.ProcessEnv;
      /** Where `~/` leads (raw). */
      home: string;
      /** What `git config --list -z` read of each file, by place and content, for the whole pass. */
      parsed: Map<string, Promise<Buffer | null>>;
    },
  ) {}

  /** A place git listed settings from: its own includes are in git's list. */
  readByGit(place: string): void {
    this.#known.add(place);
  }

  /** The line of the file an include names (at `depth` from git's list), noted to be followed. */
  line(named: string, depth: number): Buffer {
    const { format, deadline } = this.pass;
    const place = placeNow(named, deadline);
    const content = identifyAt(Buffer.from(place, 'latin1'), format, deadline.at);
    const held =
      content === null ? 'absent' : isUnread(content) ? `unreadable:${content.unreadable}` : content.sha256;
    if (content !== null && !isUnread(content) && depth <= INCLUDE_DEPTH)
      this.#pending.push({ named, place, depth, sha256: content.sha256 });
    return Buffer.concat([Buffer.from(`include\0${place}\0${held}`, 'latin1'), NUL]);
  }

  /**
   * The lines of the files reached from those git did not read, in the order they are named (each
   * step's files read `GIT_AT_ONCE` at a time, then taken in order), each file's includes read once.
   * A file git cannot parse includes nothing (git stops on it as well).
   */
  async follow(): Promise<Buffer[]> {
    const lines: Buffer[] = [];
    let read = 0;
    while (this.#pending.length > 0 && read < INCLUDES_READ) {
      const step: Pending[] = [];
      for (const next of this.#pending.splice(0)) {
        if (this.#known.has(next.place) || read >= INCLUDES_READ) continue;
        this.#known.add(next.place);
        read++;
        step.push(next);
      }
      const results = new Map<Pending, Buffer | null>();
      await eachAtOnce(step, GIT_AT_ONCE, async (next) => {
        results.set(next, await this.parsed(next));
      });
      for (const next of step) {
        const entries = results.get(next);
        if (entries === null || entries === undefined) continue;
        for (const entry of entriesOf(entries)) {
          const included = includedFile(entry, next.named, this.pass.home);
          if (included !== undefined) lines.push(this.line(included, next.depth + 1));
        }
      }
    }
    return lines;
  }

  /** What git read of a file: parsed once a pass for each content of it. */
  private parsed(next: Pending): Promise<Buffer | null> {
    const key = `${next.place}\0${next.sha256}`;
    let out = this.pass.parsed.get(key);
    if (out === undefined) {
      out = this.parse(next.place);
      this.pass.parsed.set(key, out);
    }
    return out;
  }

  /**
   * A file's settings, read with git's own parser from a descriptor opened here (its place in any
   * bytes; git given `--file -`), or null when it is no regular file now or git cannot parse it
   * (git stops on such a file as well).
   */
  private async parse(place: string): Promise<Buffer | null> {
    let fd: number;
    try {
      fd = openSync(Buffer.from(place, 'latin1'), constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return null;
    }
    try {
      if (!fstatSync(fd).isFile()) return null;
      const asked = ['config', '--file', '-', '--no-includes', '--list', '-z'];
      return (await runGit(this.worktree, asked, this.pass.deadline, this.pass.env, fd)).stdout;
    } catch (error) {
      if (error instanceof ReconcileError && error.code === 'git') return null;
      throw error;
    } finally {
      closeSync(fd);
    }
  }
}

/** `git config --list -z` without origins: `key\nvalue` or a bare `key`, each ended by a NUL. */
function* entriesOf(out: Buffer): Generator<Buffer> {
  for (let at = 0, end = out.indexOf(0); end >= 0; at = end + 1, end = out.indexOf(0, at))
    yield out.subarray(at, end);
}

/** The places of `file:` origins (relative to the work tree, where git ran), each resolved once. */
class OriginPlaces {
  readonly #known = new Map<string, string>();
  constructor(
    readonly worktree: string,
    readonly deadline: Deadline,
  ) {}

  /** The path of an origin that is a file, made absolute as git named it; else undefined. */
  path(origin: string): string | undefined {
    if (!origin.startsWith('file:')) return undefined;
    const path = origin.slice('file:'.length);
    return isAbsolute(path) ? path : `${this.worktree}/${path}`;
  }

  /** The real place of an origin that is a file; any other origin as it is. */
  of(origin: string): string {
    const path = this.path(origin);
    if (path === undefined) return origin;
    let place = this.#known.get(path);
    if (place === undefined) {
      place = placeNow(path, this.deadline);
      this.#known.set(path, place);
    }
    return place;
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
