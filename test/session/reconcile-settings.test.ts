/**
 * The settings git runs a repository with, from files no row watches: the user's `~/.gitconfig`, a
 * file the repository's config includes from outside the tree or from a folder `.gitignore` hides.
 * Each case plants a setting that makes git run a program (`core.fsmonitor`, run by `git status`),
 * checks that git really runs it, and reads the receipt's rows and `tally verify` for real sessions.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, type Project } from '../cli/tally-process.js';
import { git, packageLines, packageReceipt } from './fixture.js';

/** One session around `act`: the receipt's rows (Tally's own files left out) and the package's bytes. */
async function session(p: Project, act: () => void): Promise<{ rows: string[][]; pkg: Buffer }> {
  assert.equal((await p.tally(['init'])).code, 0);
  const started = await p.tally(['session', 'start', '--json']);
  assert.equal(started.code, 0, started.stderr);
  act();
  const closed = await p.tally(['session', 'close', '--json']);
  assert.equal(closed.code, 0, closed.stderr);
  const path = String(jsonOut(closed).package);
  const verified = await p.tally(['verify', path, '--json']);
  assert.equal(verified.code, 0, verified.stdout);
  const pkg = readFileSync(path);
  const rows = packageReceipt(pkg)
    .files_written.filter((row) => !row.path.startsWith('.tally/') && row.path !== '.gitignore')
    .map((row) => [row.path, row.operation]);
  return { rows, pkg };
}

/** The commit the signed start record's baseline names. */
function startCommit(pkg: Buffer): unknown {
  const envelope = JSON.parse(packageLines(pkg)[1]!.toString('utf8')) as { payload: string };
  const record = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
  return record.event.extensions['dev.tally.workspace'].baseline.commit;
}

/** A program git runs as the fsmonitor: it leaves `ran` beside itself. */
function monitor(dir: string): string {
  const path = join(dir, 'monitor.sh');
  writeFileSync(path, `#!/bin/sh\necho "$@" > "${join(dir, 'ran')}"\n`, { mode: 0o755 });
  return path;
}

/** The oracle: `git status` in `cwd`, as the user (their HOME) runs it, ran the planted program. */
function gitStatusRuns(p: Project, cwd: string): boolean {
  execFileSync('git', ['status', '--short'], { cwd, env: { ...process.env, HOME: p.dir }, stdio: 'ignore' });
  return existsSync(join(p.dir, 'ran'));
}

/**
 * A session that plants the fsmonitor in `file`, which git reads only on a branch named release:
 * a row, and the oracle — git runs it there, not on the session's branch.
 */
async function plantedForRelease(p: Project, file: string, label: string): Promise<void> {
  const program = monitor(p.dir);
  const { rows } = await session(p, () => {
    writeFileSync(file, `[core]\n\tfsmonitor = ${program}\n`);
  });
  assert.deepEqual(rows, [['.git/config-in-effect', 'modified']], label);
  assert.ok(!gitStatusRuns(p, p.root), `${label}: the condition held on the session's branch`);
  git(p.root, 'checkout', '-q', '-b', 'release');
  assert.ok(gitStatusRuns(p, p.root), `${label}: git did not run the planted fsmonitor`);
}

describe('the settings git runs a repository with', () => {
  it("a program planted in the user's ~/.gitconfig is a row; git status runs it", async () => {
    const p = makeProject('tally-settings-global-');
    writeFileSync(join(p.dir, '.gitconfig'), '[user]\n\tname = Someone\n');
    const program = monitor(p.dir);
    const { rows } = await session(p, () => {
      writeFileSync(
        join(p.dir, '.gitconfig'),
        `[user]\n\tname = Someone\n[core]\n\tfsmonitor = ${program}\n`,
      );
    });
    assert.deepEqual(rows, [['.git/config-in-effect', 'modified']]);
    assert.ok(gitStatusRuns(p, p.root), 'git did not run the planted fsmonitor');
  });

  it('a setting in a file the config includes, outside the tree or hidden by .gitignore, is a row', async () => {
    for (const where of ['outside', 'ignored'] as const) {
      const p = makeProject(`tally-settings-${where}-`);
      const file = where === 'outside' ? join(p.dir, 'extra.cfg') : join(p.root, 'local', 'extra.cfg');
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, '');
      if (where === 'ignored') writeFileSync(join(p.root, '.gitignore'), 'local/\n.tally/\n');
      // Included before the session: the include itself was an earlier session's row.
      git(p.root, 'config', 'include.path', file);
      const program = monitor(p.dir);
      const { rows } = await session(p, () => {
        writeFileSync(file, `[core]\n\tfsmonitor = ${program}\n`);
      });
      assert.deepEqual(rows, [['.git/config-in-effect', 'modified']], where);
      assert.ok(gitStatusRuns(p, p.root), `${where}: git did not run the planted fsmonitor`);
    }
  });

  it('a file included under a condition that does not hold now, named or reached through a link, is watched all the same', async () => {
    for (const how of ['named', 'link'] as const) {
      const p = makeProject(`tally-settings-${how}-`);
      const file = join(p.dir, 'release.cfg');
      writeFileSync(file, '');
      // A relative path is taken from the folder of the file that names it.
      if (how === 'link') symlinkSync(file, join(p.dir, 'linked.cfg'));
      const named = how === 'named' ? file : 'linked.cfg';
      // Read by git only on a branch named release: not the branch the session runs on.
      writeFileSync(join(p.dir, '.gitconfig'), `[includeIf "onbranch:release"]\n\tpath = ${named}\n`);
      await plantedForRelease(p, file, how);
    }
  });

  it('a file included in turn by a file git does not read yet is watched as well', async () => {
    // A folder named in bytes beyond ASCII (a home such as /home/josé): read all the same.
    for (const [how, folder] of [
      ['include', 'cfg'],
      ['includeIf', 'cfg-josé'],
    ] as const) {
      const p = makeProject(`tally-settings-deeper-${how}-`);
      mkdirSync(join(p.dir, folder));
      const deeper = join(p.dir, folder, 'deeper.cfg');
      writeFileSync(deeper, '');
      // Each relative path from the folder of the file that names it: ~/<folder>/release.cfg,
      // then ~/<folder>/deeper.cfg, read by git only on a branch named release.
      const section = how === 'include' ? '[include]' : '[includeIf "onbranch:release"]';
      writeFileSync(join(p.dir, folder, 'release.cfg'), `${section}\n\tpath = deeper.cfg\n`);
      const named = `${folder}/release.cfg`;
      writeFileSync(join(p.dir, '.gitconfig'), `[includeIf "onbranch:release"]\n\tpath = ${named}\n`);
      await plantedForRelease(p, deeper, how);
    }
  });

  it("a setting in the repository's own config is that file's row alone", async () => {
    const p = makeProject('tally-settings-own-');
    const program = monitor(p.dir);
    const { rows } = await session(p, () => git(p.root, 'config', 'core.fsmonitor', program));
    assert.deepEqual(rows, [['.git/config', 'modified']]);
    assert.ok(gitStatusRuns(p, p.root));
  });

  it("a nested repository's included settings are its own row; the start records no setting's value", async () => {
    const p = makeProject('tally-settings-nested-');
    const sub = join(p.root, 'sub');
    mkdirSync(sub);
    git(sub, 'init', '-q');
    const file = join(p.dir, 'sub.cfg');
    writeFileSync(file, '[http]\n\textraHeader = Authorization: Bearer s3cr3t-t0ken-value\n');
    git(sub, 'config', 'include.path', file);
    const program = monitor(p.dir);
    const { rows, pkg } = await session(p, () => {
      writeFileSync(file, `[core]\n\tfsmonitor = ${program}\n`);
    });
    assert.deepEqual(rows, [['sub/.git/config-in-effect', 'modified']]);
    assert.ok(!pkg.includes('s3cr3t-t0ken-value'), 'a setting was recorded as it is');
    assert.ok(gitStatusRuns(p, sub));
  });

  it("the close reads the settings where the start's git found them, whatever its own environment", async () => {
    // A stray environment: the start run from a git hook of another repository (GIT_DIR, settings
    // on git's command line), the close under another HOME whose ~/.gitconfig differs.
    const p = makeProject('tally-settings-env-');
    writeFileSync(join(p.dir, '.gitconfig'), '[alias]\n\tst = status\n');
    const other = join(p.dir, 'other');
    mkdirSync(join(other, 'home'), { recursive: true });
    git(other, 'init', '-q');
    writeFileSync(join(other, 'home', '.gitconfig'), `[core]\n\tfsmonitor = ${monitor(other)}\n`);
    Object.assign(p.env, {
      GIT_DIR: join(other, '.git'),
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.hooksPath',
      GIT_CONFIG_VALUE_0: join(other, 'hooks'),
    });
    const { rows, pkg } = await session(p, () => {
      for (const name of ['GIT_DIR', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0'])
        delete p.env[name];
      p.env.HOME = join(other, 'home');
      writeFileSync(join(p.root, 'README.md'), '# changed\n');
    });
    assert.deepEqual(rows, [['README.md', 'modified']]);
    // The start's commit is the project's, not the other repository's.
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: p.root, encoding: 'utf8' }).trim();
    assert.equal(startCommit(pkg), head);
  });

  it("a program planted in the start's ~/.gitconfig is a row when the close runs under a copy of it", async () => {
    const p = makeProject('tally-settings-copy-');
    writeFileSync(join(p.dir, '.gitconfig'), '[user]\n\tname = Someone\n');
    const copy = join(p.dir, 'copy');
    mkdirSync(copy);
    writeFileSync(join(copy, '.gitconfig'), '[user]\n\tname = Someone\n');
    const program = monitor(p.dir);
    const { rows } = await session(p, () => {
      writeFileSync(
        join(p.dir, '.gitconfig'),
        `[user]\n\tname = Someone\n[core]\n\tfsmonitor = ${program}\n`,
      );
      // A close in an environment of the agent's choosing reads the same files as the start.
      p.env.HOME = copy;
    });
    assert.deepEqual(rows, [['.git/config-in-effect', 'modified']]);
    assert.ok(gitStatusRuns(p, p.root), 'git did not run the planted fsmonitor');
  });

  it('settings as they were: no row', async () => {
    const p = makeProject('tally-settings-same-');
    writeFileSync(join(p.dir, 'extra.cfg'), '[alias]\n\tst = status\n');
    git(p.root, 'config', 'include.path', join(p.dir, 'extra.cfg'));
    // A file git does not read yet that includes itself: read once, not round and round.
    writeFileSync(join(p.dir, 'loop.cfg'), '[include]\n\tpath = loop.cfg\n');
    git(p.root, 'config', 'includeIf.onbranch:release.path', join(p.dir, 'loop.cfg'));
    const { rows } = await session(p, () => {
      // The same settings written again, and a file of the tree: only the file is a row.
      writeFileSync(join(p.dir, 'extra.cfg'), '[alias]\n\tst = status\n');
      writeFileSync(join(p.root, 'README.md'), '# changed\n');
    });
    assert.deepEqual(rows, [['README.md', 'modified']]);
  });
});
