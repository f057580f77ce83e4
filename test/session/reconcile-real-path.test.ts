/**
 * `gitRealPath` against git itself: a linked worktree whose git directory is reached through a
 * link, its `commondir` rewritten to each case, and `git rev-parse --git-common-dir` the answer the
 * resolution must give (or, where git stops with an error, none). Then the places an agent can
 * make long — 64 KiB of steps through folders 2,000 deep — against the structure the test built:
 * the answer, and one look-up a component, no more; and the pass's deadline, past which resolving
 * stops as a git command does.
 */
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Deadline, deadlineAfter } from '../../src/capture/reconcile/deadline.js';
import { ReconcileError } from '../../src/capture/reconcile/error.js';
import { placeNow } from '../../src/capture/reconcile/git.js';
import { gitRealPath, gitResolution } from '../../src/capture/reconcile/real-path.js';
import { removeTempDir, tempDir } from '../temp.js';
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
      assert.equal(gitRealPath(joined, deadlineAfter()), expected, `gitRealPath, ${shown}`);
    }
  });
});

/** What a `commondir` holds at most, as Tally reads it. */
const COMMONDIR_BYTES = 64 * 1024;

/** Folders of a one-character name, one in the next, as deep as a path the kernel takes allows. */
const DEPTH = 2000;

/** The components of a path without links that are looked up: all but the empty ones, `.` and `..`. */
function names(path: string): number {
  return path.split('/').filter((c) => c !== '' && c !== '.' && c !== '..').length;
}

/** `unit` repeated to fill what is left of a commondir after `head`. */
function fill(head: string, unit: string): string {
  return unit.repeat(Math.floor((COMMONDIR_BYTES - head.length) / unit.length));
}

describe('a place of many steps through deep folders', () => {
  /** Folders of a one-character name, one in the next: the chain's top and bottom. */
  let top = '';
  let bottom = '';
  before(() => {
    top = realpathSync(tempDir('tally-real-path-deep-'));
    bottom = join(top, ...Array<string>(DEPTH).fill('a'));
    mkdirSync(bottom, { recursive: true });
  });
  // A folder at a time from the bottom: removed whole, the chain is deeper than Node's rm recurses.
  after(() => {
    for (let folder = bottom; folder !== top; folder = dirname(folder)) rmSync(folder, { recursive: true });
    removeTempDir(top);
  });

  it('64 KiB of `..` steps and names, 2,000 folders deep: the answer the structure gives, one look-up a name', () => {
    // Up 500 folders, `.` steps, down again: no links, so the path's text is its answer.
    const round = `${'../'.repeat(500)}${'./'.repeat(1500)}${'a/'.repeat(500)}`;
    const head = `${bottom}/`;
    const raw = `${head}${fill(`${head}missing`, round)}missing`;
    assert.ok(raw.length > COMMONDIR_BYTES - round.length && raw.length <= COMMONDIR_BYTES);
    const walked = gitResolution(raw, deadlineAfter());
    // Only the last component may be missing.
    assert.equal(walked.place, resolve(raw));
    assert.equal(walked.place, `${bottom}/missing`);
    assert.equal(walked.lookups, names(raw));
    assert.equal(gitRealPath(`${raw}/`, deadlineAfter()), undefined);
  });

  it('links on the way: `..` after each goes up from where it leads, their targets walked once, the 34th stops', () => {
    // `up` leads a hundred folders up from the bottom; the names after it come back down.
    const UP = 100;
    symlinkSync('../'.repeat(UP), join(bottom, 'up'));
    const round = `up/${'a/'.repeat(UP)}`;
    const rounds = (n: number) => `${bottom}/${round.repeat(n)}`;
    const followed = gitResolution(rounds(33), deadlineAfter());
    assert.equal(followed.place, bottom);
    // The bottom's own names, then each round: the link and the names after its target.
    assert.equal(followed.lookups, names(bottom) + 33 * (1 + UP));
    const stopped = gitResolution(rounds(34), deadlineAfter());
    assert.equal(stopped.place, undefined);
    assert.equal(stopped.lookups, names(bottom) + 33 * (1 + UP) + 1);
  });

  it("past the pass's deadline: resolving stops with a `timeout`, as a git command does", () => {
    const raw = `${bottom}/${fill(`${bottom}/`, '../a/')}`;
    const passed: Deadline = { at: Date.now() - 1, ms: 1 };
    const timedOut = (error: unknown) => error instanceof ReconcileError && error.code === 'timeout';
    assert.throws(() => gitRealPath(raw, passed), timedOut);
    assert.throws(() => placeNow(raw, passed), timedOut);
    assert.throws(() => placeNow(top, passed), timedOut);
    // `..` and `.` alone look nothing up: nothing to stop.
    assert.equal(placeNow('/./..', passed), '/');
  });
});
