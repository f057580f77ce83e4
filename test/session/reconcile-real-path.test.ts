/**
 * `gitRealPath` against git itself: a linked worktree whose git directory is reached through a
 * link, its `commondir` rewritten to each case, and `git rev-parse --git-common-dir` the answer the
 * resolution must give (or, where git stops with an error, none).
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gitRealPath } from '../../src/capture/reconcile/real-path.js';
import { tempDir } from '../temp.js';
import { git } from './fixture.js';

describe('a commondir resolved as git resolves it', () => {
  it('agrees with git on links, `..` after a link or a file, long paths, and where git gives up', () => {
    const dir = tempDir('tally-real-path-');
    const main = join(dir, 'main');
    mkdirSync(main);
    git(main, 'init', '-q');
    git(main, 'commit', '-q', '--allow-empty', '-m', 'empty');
    const wt = join(dir, 'wt');
    git(main, 'worktree', 'add', '-q', wt);
    const common = join(main, '.git');
    const own = join(common, 'worktrees', 'wt');
    const side = join(dir, 'side');
    symlinkSync(own, side);
    writeFileSync(join(wt, '.git'), `gitdir: ${side}\n`);
    symlinkSync('../..', join(own, 'up'));
    mkdirSync(join(dir, 'chain'));
    let previous = common;
    for (let i = 1; i <= 34; i++) {
      const link = join(dir, 'chain', `l${i}`);
      symlinkSync(previous, link);
      previous = link;
    }
    const cases: Array<[string, string | undefined]> = [
      ['../..', common],
      ['up', common],
      ['../../HEAD/..', common],
      [`${'./'.repeat(2500)}../..`, common],
      [`${side}/../..`, common],
      [join(dir, 'chain', 'l33'), common],
      [join(dir, 'chain', 'l34'), undefined],
      ['../../missing/..', undefined],
    ];
    for (const [text, expected] of cases) {
      writeFileSync(join(own, 'commondir'), `${text}\n`);
      let said: string | undefined;
      try {
        said = git(wt, 'rev-parse', '--git-common-dir').trim();
      } catch {
        said = undefined;
      }
      const shown = text.slice(0, 40);
      assert.equal(said, expected, `git, ${shown}`);
      const joined = text.startsWith('/') ? text : `${side}/${text}`;
      assert.equal(gitRealPath(joined), expected, `gitRealPath, ${shown}`);
    }
  });
});
