/**
 * Reconciliation against an agent that reaches the pass's own means of looking at the tree.
 *
 * Tally lists the tree with git and a git directory of its own, a temporary folder. The agent runs
 * as the same user, so a process it left running can watch the temporary folder appear and write
 * into it before git reads it (reproduced with a watcher on the folder of temporary files; here a
 * `git` first on PATH plants the same files at the same moment, so the test does not depend on
 * winning a race): an index there naming a new file kept it out of `ls-files --others`, and a
 * config saying `core.ignoreCase` let a `.gitignore` line hide a new folder spelt in other case.
 *
 * And a folder replaced by a symbolic link: git does not follow a link on the way to a path, so the
 * tracked files under the folder are deleted and the link is the new file. Read through the link,
 * they looked unchanged (the folder moved aside keeps their inodes and change times).
 *
 * Oracles: what the test wrote, and `git status` of the real repository.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RECENT_MS } from '../../src/capture/reconcile/stat.js';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import { type Fixture, git, makeFixture, packageReceipt } from './fixture.js';

/** One session: `act` runs in it, `during` wraps the close; the receipt's rows, the package verified. */
async function session(
  fx: Fixture,
  act: () => void,
  during: <T>(close: () => Promise<T>) => Promise<T> = (close) => close(),
): Promise<[string, string][]> {
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  // The start's stats vouch for the files (none too recent), as in a real session.
  await sleep(RECENT_MS + 50);
  act();
  const closed = await during(() =>
    closeSession({ state: fx.state, session: readSessionInfo(fx.state, info.id), signer: fx.signer }),
  );
  const pkg = readFileSync(closed.packagePath);
  const verified = await verifyPackage(pkg, {
    trusted: [toPublicKey(fx.signer.privateKey)],
    now: new Date(),
  });
  assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => !c.ok)));
  return packageReceipt(pkg).files_written.map((row) => [row.path, row.operation]);
}

/**
 * A `git` that, before running the real one, writes `index` and `config` into the git directory
 * of Tally's listing: what the agent's watcher does when it wins the race.
 */
function plantingGit(dir: string, index: string, config: string): string {
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'git'),
    [
      '#!/bin/sh',
      'case "$GIT_DIR" in',
      `  */tally-listing-*) cp '${index}' "$GIT_DIR/index"; cp '${config}' "$GIT_DIR/config" ;;`,
      'esac',
      `exec '${real}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'git'), 0o755);
  return bin;
}

describe('reconciliation against an agent that reaches the pass itself', () => {
  it("files written into the listing's own git directory hide nothing", async () => {
    const fx = await makeFixture('tally-listing-dir-');
    const r = fx.root;
    writeFileSync(join(r, '.gitignore'), 'build/\n');
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'ignore build');
    // The planted index names secret.js as tracked; the planted config turns on core.ignoreCase.
    const scratch = join(fx.dir, 'scratch');
    mkdirSync(scratch);
    git(scratch, 'init', '-q');
    writeFileSync(join(scratch, 'secret.js'), 'payload\n');
    const index = join(fx.dir, 'planted-index');
    execFileSync('git', ['update-index', '--add', 'secret.js'], {
      cwd: scratch,
      env: { ...process.env, GIT_INDEX_FILE: index },
    });
    const config = join(fx.dir, 'planted-config');
    writeFileSync(config, '[core]\n\tignoreCase = true\n');
    const bin = plantingGit(fx.dir, index, config);
    const rows = await session(
      fx,
      () => {
        writeFileSync(join(r, 'secret.js'), 'payload\n');
        mkdirSync(join(r, 'Build'));
        writeFileSync(join(r, 'Build', 'run.js'), 'payload\n');
      },
      async (close) => {
        const path = process.env.PATH;
        process.env.PATH = `${bin}:${path}`;
        try {
          return await close();
        } finally {
          process.env.PATH = path;
        }
      },
    );
    // git sees both files.
    assert.equal(
      git(r, 'status', '--porcelain', '--untracked-files=all', '--', 'Build', 'secret.js'),
      '?? Build/run.js\n?? secret.js\n',
    );
    assert.deepEqual(rows, [
      ['Build/run.js', 'created'],
      ['secret.js', 'created'],
    ]);
  });

  it('a folder replaced by a symbolic link: its tracked files are deleted, the link created', async () => {
    const fx = await makeFixture('tally-listing-link-');
    const r = fx.root;
    writeFileSync(join(r, 'src', 'lib.js'), 'export const lib = 1;\n');
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'lib');
    const aside = join(fx.dir, 'aside');
    const rows = await session(fx, () => {
      // Moved aside whole: the files keep their inodes and change times.
      renameSync(join(r, 'src'), aside);
      symlinkSync(aside, join(r, 'src'));
    });
    assert.equal(git(r, 'status', '--porcelain', '--', 'src'), ' D src/app.js\n D src/lib.js\n?? src\n');
    assert.deepEqual(rows, [
      ['src', 'created'],
      ['src/app.js', 'deleted'],
      ['src/lib.js', 'deleted'],
    ]);
  });
});
