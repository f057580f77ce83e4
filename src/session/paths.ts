/**
 * Where Tally keeps things. The Tally home (`TALLY_HOME`, default `~/.tally`) holds the global ship
 * key; a project's `.tally/` (at the git top level, or the directory `tally init` ran in) holds the
 * project's key, agent certificates, sessions and packages. The nearest `.tally/` above the working
 * directory wins; without one, the Tally home serves as the state directory.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { GitError, gitTimeoutMs, repositoryEnv, runGit } from '../core/git.js';
import { tallyHome } from '../core/home.js';

const TOP_LEVEL = ['rev-parse', '--show-toplevel'];

function topLevelTimedOut(cwd: string, timeoutMs: number): GitError {
  return new GitError(
    'timeout',
    `git rev-parse in ${cwd} did not finish within ${timeoutMs} ms and was stopped (TALLY_GIT_TIMEOUT_MS): the repository of ${cwd} cannot be told`,
    { args: TOP_LEVEL, cwd, timeout_ms: timeoutMs },
  );
}

/**
 * The git top level of `cwd`, or null outside a repository (or without git). A git that does not
 * answer within its deadline (the repository's own files can make it wait) is a GitError, never
 * taken for "not a repository". For a command's own process; a long-lived one uses
 * `gitTopLevelAsync`.
 */
export function gitTopLevel(cwd: string): string | null {
  const timeoutMs = gitTimeoutMs();
  try {
    return execFileSync('git', TOP_LEVEL, {
      cwd,
      env: repositoryEnv(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    }).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ETIMEDOUT') throw topLevelTimedOut(cwd, timeoutMs);
    return null;
  }
}

/** `gitTopLevel` without blocking: what the recorder asks for every new project an event names. */
export async function gitTopLevelAsync(cwd: string): Promise<string | null> {
  try {
    return (await runGit(TOP_LEVEL, { cwd })).toString('utf8').trim();
  } catch (error) {
    if (error instanceof GitError && (error.code === 'failed' || error.code === 'missing')) return null;
    throw error;
  }
}

/** The nearest directory at or above `cwd` that holds a `.tally/` directory. */
export function findProjectDir(cwd: string, env: NodeJS.ProcessEnv): string | null {
  const home = tallyHome(env);
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, '.tally');
    if (candidate !== home && existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** Where `tally init` (without --global) creates `.tally/`. */
export function projectRootFor(cwd: string): string {
  return gitTopLevel(cwd) ?? resolve(cwd);
}

/** `projectRootFor` without blocking (the recorder). */
export async function projectRootForAsync(cwd: string): Promise<string> {
  return (await gitTopLevelAsync(cwd)) ?? resolve(cwd);
}

/**
 * The tree a session started from `cwd` watches: the one holding the project's `.tally/` (its git
 * top level, or the folder itself outside git), else the one `cwd` is in.
 */
export function sessionRootFor(where: Places, cwd: string): string {
  return where.project ? projectRootFor(dirname(where.project)) : projectRootFor(cwd);
}

/** `sessionRootFor` without blocking, each git within its deadline (the recorder). */
export async function sessionRootForAsync(where: Places, cwd: string): Promise<string> {
  return where.project ? projectRootForAsync(dirname(where.project)) : projectRootForAsync(cwd);
}

export interface Places {
  home: string;
  /** The project's `.tally/`, if there is one. */
  project: string | null;
  /** Where sessions, agents and packages go: the project's `.tally/`, else the Tally home. */
  state: string;
}

export function places(cwd: string, env: NodeJS.ProcessEnv): Places {
  const home = tallyHome(env);
  const project = findProjectDir(cwd, env);
  return { home, project, state: project ?? home };
}

export { tallyHome };
