/** Real temporary git repositories for agents to work in. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeTempDir, removeTempDir } from './temp.js';

export interface Repo {
  /** The work tree (a real path). */
  dir: string;
  git(...args: string[]): string;
  write(path: string, content: string): void;
  read(path: string): string;
  /** Stages everything and commits; returns the new commit id. */
  commit(message: string): string;
  cleanup(): void;
}

export interface RepoOptions {
  /** Files of the first commit. */
  files?: Record<string, string>;
  /** Further commits, each with the files it writes. */
  commits?: { message: string; files: Record<string, string> }[];
}

// No user or system git config: the same repository on every machine.
const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.invalid',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.invalid',
};

export function makeRepo(options: RepoOptions = {}): Repo {
  const root = makeTempDir('repo');
  const dir = join(root, 'project');
  mkdirSync(dir);
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'commit.gpgsign=false', ...args], {
      cwd: dir,
      env: GIT_ENV,
      encoding: 'utf8',
    });
  const write = (path: string, content: string): void => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  };
  const commit = (message: string): string => {
    git('add', '-A');
    git('commit', '-q', '--allow-empty', '-m', message);
    return git('rev-parse', 'HEAD').trim();
  };
  git('init', '-q', '-b', 'main');
  for (const [path, content] of Object.entries(options.files ?? {})) write(path, content);
  commit('initial');
  for (const c of options.commits ?? []) {
    for (const [path, content] of Object.entries(c.files)) write(path, content);
    commit(c.message);
  }
  return {
    dir,
    git,
    write,
    read: (path) => readFileSync(join(dir, path), 'utf8'),
    commit,
    cleanup: () => removeTempDir(root),
  };
}
