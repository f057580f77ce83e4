/**
 * Where Tally keeps things. The Tally home (`TALLY_HOME`, default `~/.tally`) holds the global ship
 * key; a project's `.tally/` (at the git top level, or the directory `tally init` ran in) holds the
 * project's key, agent certificates, sessions and packages. The nearest `.tally/` above the working
 * directory wins; without one, the Tally home serves as the state directory.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tallyHome } from '../core/home.js';

/** The git top level of `cwd`, or null outside a repository (or without git). */
export function gitTopLevel(cwd: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
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

/**
 * The tree a session started from `cwd` watches: the one holding the project's `.tally/` (its git
 * top level, or the folder itself outside git), else the one `cwd` is in.
 */
export function sessionRootFor(where: Places, cwd: string): string {
  return where.project ? projectRootFor(dirname(where.project)) : projectRootFor(cwd);
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
