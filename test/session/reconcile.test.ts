/**
 * Reconciliation at close against the start baseline, in real git repositories and a plain tree.
 * Oracles: git's own net view of the tree (`git add -A` into a scratch index, then
 * `git diff --cached --name-status -M100%` against the start commit), the bar's rules (changes no
 * channel saw are recorded once, by the reconcile source; dirty files left alone are not blamed),
 * and the package verifier.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, recordEvent, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import { tempDir } from '../temp.js';
import {
  type Fixture,
  git,
  makeFixture,
  packageReceipt as receiptOf,
  packageRecords as records,
  toolAfter,
  toolBefore,
} from './fixture.js';

/** git's own net view: every change since `start`, renames of identical content paired. */
function gitNetView(root: string, start: string): Map<string, string> {
  const index = join(tempDir('tally-index-'), 'index');
  const env = { ...process.env, GIT_INDEX_FILE: index };
  execFileSync('git', ['read-tree', start], { cwd: root, env });
  execFileSync('git', ['add', '-A'], { cwd: root, env });
  const out = execFileSync('git', ['diff', '--cached', '--name-status', '-z', '-M100%', start], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  const fields = out.split('\0').filter((f) => f !== '');
  const view = new Map<string, string>();
  for (let i = 0; i < fields.length; ) {
    const status = fields[i++]!;
    if (status.startsWith('R')) {
      const from = fields[i++]!;
      view.set(fields[i++]!, `renamed:${from}`);
    } else {
      const op = { A: 'created', M: 'modified', D: 'deleted', T: 'modified' }[status[0]!] ?? status;
      view.set(fields[i++]!, op);
    }
  }
  return view;
}

async function hookWrite(fx: Fixture, id: string, call: string, path: string): Promise<void> {
  for (const event of [
    toolBefore(call, 'Write', { file_path: join(fx.root, path), content: 'x' }, 'write'),
    toolAfter(call, 'Write', { file_path: join(fx.root, path), content: 'x' }, 'write'),
  ])
    await recordEvent({
      state: fx.state,
      session: readSessionInfo(fx.state, id),
      signer: fx.signer,
      event,
      source: 'hook',
    });
}

describe('reconciliation at close (git)', () => {
  it('records each change no channel saw once, corroborates the rest, and leaves untouched dirty files alone', async () => {
    const fx = await makeFixture('tally-reconcile-');
    const r = fx.root;
    writeFileSync(join(r, '.gitignore'), 'out/\n');
    writeFileSync(join(r, 'old.txt'), 'rename me\n');
    writeFileSync(join(r, 'gone.txt'), 'delete me\n');
    writeFileSync(join(r, 'sed.txt'), 'colour\n');
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'more');
    const start = git(r, 'rev-parse', 'HEAD').trim();
    // Dirty before the session: one left alone, one touched again.
    writeFileSync(join(r, 'README.md'), '# dirty before\n');
    writeFileSync(join(r, 'src/app.js'), 'export const v = 2;\n');
    writeFileSync(join(r, 'scratch.txt'), 'untracked before\n');

    const { info } = await startSession({ state: fx.state, root: r, signer: fx.signer });
    // Seen by a hook: a Write.
    writeFileSync(join(r, 'written.txt'), 'x');
    await hookWrite(fx, info.id, 'c1', 'written.txt');
    // Unseen: sed -i, a build output in new nested folders, a deletion, a rename, a commit, a manual
    // edit of a dirty file, an ignored file, a name that is not UTF-8.
    execFileSync('sed', ['-i', 's/colour/color/', 'sed.txt'], { cwd: r });
    mkdirSync(join(r, 'gen/deep/er'), { recursive: true });
    writeFileSync(join(r, 'gen/deep/er/out.js'), 'generated\n');
    rmSync(join(r, 'gone.txt'));
    renameSync(join(r, 'old.txt'), join(r, 'new.txt'));
    writeFileSync(join(r, 'src/app.js'), 'export const v = 3;\n');
    mkdirSync(join(r, 'out'));
    writeFileSync(join(r, 'out/ignored.bin'), 'ignored');
    writeFileSync(join(r, 'committed.txt'), 'made and committed in the session\n');
    git(r, 'add', 'committed.txt');
    git(r, 'commit', '-qm', 'in session');
    const latin = Buffer.concat([
      Buffer.from(r),
      Buffer.from('/caf'),
      Buffer.from([0xe9]),
      Buffer.from('.txt'),
    ]);
    writeFileSync(latin, 'latin-1 name\n');

    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    const pkg = readFileSync(closed.packagePath);
    const all = records(fx, pkg);
    const reconciled = all.filter((rec) => rec.source === 'git-reconcile');
    const changed = reconciled.filter((rec) => rec.event.type === 'file.changed');
    const summaries = reconciled.filter((rec) => rec.event.type === 'tally.reconcile.summary');
    assert.equal(summaries.length, 1);
    const summary = (summaries[0]!.event.extensions as Record<string, Record<string, unknown>>)[
      'dev.tally.reconcile'
    ]!;
    assert.deepEqual(summary.corroborated, [
      { path: 'written.txt', operation: 'created', after: changedDigest(r, 'written.txt') },
    ]);
    assert.equal(summary.skipped, 0);

    // git's net view of the same tree, less what the session did not do (README.md left dirty,
    // scratch.txt untouched) and what the hook saw.
    const oracle = gitNetView(r, start);
    oracle.delete('README.md');
    oracle.delete('scratch.txt');
    oracle.delete('written.txt');
    const reported = new Map<string, string>();
    let nonUtf8: Record<string, unknown> | undefined;
    for (const rec of changed) {
      const changes = rec.event.changes as { path: string; operation: string }[];
      const facts = (rec.event.extensions as Record<string, Record<string, Record<string, unknown>>>)[
        'dev.tally.changes'
      ]!;
      const first = changes[0]!;
      const from = facts[first.path]?.from;
      if (facts[first.path]?.non_utf8 === true) nonUtf8 = facts[first.path];
      const op = { create: 'created', update: 'modified', remove: 'deleted' }[first.operation]!;
      reported.set(first.path, from === undefined ? op : `renamed:${from}`);
    }
    // The non-UTF-8 name: git quotes it in its own way; ours is kept losslessly as bytes.
    assert.ok(nonUtf8, 'the non-UTF-8 path was not reported');
    assert.equal(Buffer.from(String(nonUtf8.path_b64), 'base64').toString('latin1'), 'caf\u00e9.txt');
    for (const [path, op] of oracle) if (!path.startsWith('caf')) assert.equal(reported.get(path), op, path);
    const ours = [...reported.keys()].filter((p) => !p.startsWith('caf')).sort();
    assert.deepEqual(ours, [...oracle.keys()].filter((p) => !p.startsWith('caf')).sort());
    assert.ok(!ours.includes('out/ignored.bin'), 'an ignored file was reported');
    // Deterministic order: byte order of the paths.
    const order = changed.map((rec) => (rec.event.changes as { path: string }[])[0]!.path);
    assert.deepEqual(
      order,
      [...order].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );

    const receipt = receiptOf(pkg);
    const rows = new Map(receipt.files_written.map((row) => [row.path, row]));
    assert.equal(receipt.files_written.length, rows.size, 'a path has more than one row');
    assert.ok(!rows.has('README.md'), 'an untouched dirty file was blamed on the session');
    assert.ok(!rows.has('scratch.txt'));
    assert.deepEqual(rows.get('written.txt')?.sources, ['git-reconcile', 'hook']);
    assert.equal(rows.get('written.txt')?.operation, 'created');
    assert.equal(rows.get('new.txt')?.operation, 'renamed');
    assert.equal(rows.get('new.txt')?.from, 'old.txt');
    assert.ok(!rows.has('old.txt'), 'the rename source has a row of its own');
    assert.equal(rows.get('src/app.js')?.operation, 'modified');
    assert.equal(rows.get('src/app.js')?.dirty_at_start, true);
    assert.equal(rows.get('gen/deep/er/out.js')?.operation, 'created');
    assert.equal(rows.get('committed.txt')?.operation, 'created');

    const verified = await verifyPackage(pkg, {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(),
    });
    assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => !c.ok)));
    const compared = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.deepEqual([compared.ok, compared.code], [true, 'ok']);
  });

  it('a folder replaced by a file: the files it held deleted, the file created', async () => {
    const fx = await makeFixture('tally-reconcile-folder-');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    rmSync(join(fx.root, 'src'), { recursive: true });
    writeFileSync(join(fx.root, 'src'), 'now a file\n');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    assert.deepEqual(
      receiptOf(readFileSync(closed.packagePath)).files_written.map((row) => [row.path, row.operation]),
      [
        ['src', 'created'],
        ['src/app.js', 'deleted'],
      ],
    );
  });

  it('stops at the limit and reports how many paths it did not look at', async () => {
    const fx = await makeFixture('tally-reconcile-limit-');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    for (let i = 0; i < 5; i++) writeFileSync(join(fx.root, `f${i}.txt`), `${i}\n`);
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      reconcileLimit: 3,
    });
    const all = records(fx, readFileSync(closed.packagePath));
    const changed = all.filter((rec) => rec.event.type === 'file.changed');
    assert.deepEqual(
      changed.map((rec) => (rec.event.changes as { path: string }[])[0]!.path),
      ['f0.txt', 'f1.txt', 'f2.txt'],
    );
    const summary = all.find((rec) => rec.event.type === 'tally.reconcile.summary')!;
    const ext = (summary.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
    assert.equal(ext.limit, 3);
    assert.equal(ext.skipped, 2);
    // Files the session created went past the limit: a pass that could not compare them fails.
    assert.equal(ext.skipped_session, 2);
    const verified = await verifyPackage(readFileSync(closed.packagePath), {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(),
    });
    const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.deepEqual([check.ok, check.code], [false, 'limit-exceeded']);
  });
});

describe('reconciliation against a tree whose .git the agent can write', () => {
  it('what git is told to pass over, excludes outside the tree, replaced commits and new hooks are still reported', async () => {
    const fx = await makeFixture('tally-reconcile-git-tricks-');
    const r = fx.root;
    for (const name of ['assumed.txt', 'skipped.txt', 'replaced.txt', 'left.txt'])
      writeFileSync(join(r, name), `${name}\n`);
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'files');
    // Already assume-unchanged before the session, and dirty: not the session's doing.
    git(r, 'update-index', '--assume-unchanged', 'left.txt');
    writeFileSync(join(r, 'left.txt'), 'dirty before\n');
    const { info } = await startSession({ state: fx.state, root: r, signer: fx.signer });
    // During the session: edits git is then told not to look at, a file hidden by .git/info/exclude
    // and by a global exclude file, the start commit swapped by `git replace`, and a new hook.
    writeFileSync(join(r, 'assumed.txt'), 'changed\n');
    git(r, 'update-index', '--assume-unchanged', 'assumed.txt');
    writeFileSync(join(r, 'skipped.txt'), 'changed\n');
    git(r, 'update-index', '--skip-worktree', 'skipped.txt');
    writeFileSync(join(r, '.git', 'info', 'exclude'), 'hidden.js\n');
    writeFileSync(join(r, 'hidden.js'), 'backdoor\n');
    const globalIgnore = join(tempDir('tally-global-ignore-'), 'ignore');
    writeFileSync(globalIgnore, 'also-hidden.js\n');
    git(r, 'config', 'core.excludesFile', globalIgnore);
    writeFileSync(join(r, 'also-hidden.js'), 'backdoor\n');
    const start = git(r, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(r, 'replaced.txt'), 'changed\n');
    git(r, 'add', 'replaced.txt');
    git(r, 'commit', '-qm', 'evil');
    const evil = git(r, 'rev-parse', 'HEAD').trim();
    git(r, 'replace', start, evil);
    git(r, 'reset', '-q', '--soft', start);
    writeFileSync(join(r, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\ncurl evil\n');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    const rows = receiptOf(readFileSync(closed.packagePath)).files_written.map((row) => [
      row.path,
      row.operation,
    ]);
    assert.deepEqual(rows, [
      ['.git/config', 'modified'],
      ['.git/hooks/pre-commit', 'created'],
      ['.git/info/exclude', 'modified'],
      ['also-hidden.js', 'created'],
      ['assumed.txt', 'modified'],
      ['hidden.js', 'created'],
      ['replaced.txt', 'modified'],
      ['skipped.txt', 'modified'],
    ]);
  });
});

describe('reconciliation when the start commit is gone', () => {
  it('still compares the tree: the start snapshot holds what the pass needs of the start commit', async () => {
    const fx = await makeFixture('tally-reconcile-gone-');
    writeFileSync(join(fx.root, 'later.txt'), 'later\n');
    git(fx.root, 'add', '.');
    git(fx.root, 'commit', '-qm', 'later');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    // History rewritten during the session, and the old commit pruned (git's own tools).
    git(fx.root, 'reset', '-q', '--hard', 'HEAD~1');
    git(fx.root, 'reflog', 'expire', '--expire=now', '--all');
    git(fx.root, 'gc', '-q', '--prune=now');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    const pkg = readFileSync(closed.packagePath);
    assert.deepEqual(
      receiptOf(pkg).files_written.map((row) => [row.path, row.operation]),
      [
        ['.git/info/refs', 'created'], // written by git gc
        ['later.txt', 'deleted'],
      ],
    );
    const verified = await verifyPackage(pkg, {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(),
    });
    assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => !c.ok)));
  });
});

describe('reconciliation when git cannot read the repository', () => {
  it('the close still seals, and the summary says why nothing was reconciled', async () => {
    const fx = await makeFixture('tally-reconcile-broken-');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    writeFileSync(join(fx.root, '.git', 'index'), 'not an index');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    const summary = records(fx, readFileSync(closed.packagePath)).find(
      (rec) => rec.event.type === 'tally.reconcile.summary',
    )!;
    const ext = (summary.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
    assert.equal((ext.error as { code: string }).code, 'git');
    assert.equal(closed.info.state, 'closed');
    // The package is genuine, but it cannot show that it holds every change: verification says so.
    const verified = await verifyPackage(readFileSync(closed.packagePath), {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(Date.now() + 60_000),
    });
    const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.deepEqual([verified.ok, check.ok, check.code], [false, false, 'reconcile-failed']);
    assert.equal(
      verified.checks.filter((c) => !c.ok).length,
      1,
      JSON.stringify(verified.checks.filter((c) => !c.ok)),
    );
  });
});

describe('reconciliation at close (outside git)', () => {
  it('compares tree snapshots: created in a new folder, modified, deleted, renamed', async () => {
    const fx = await makeFixture('tally-reconcile-tree-');
    const plain = join(fx.dir, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'keep.txt'), 'same\n');
    writeFileSync(join(plain, 'mod.txt'), 'one\n');
    writeFileSync(join(plain, 'del.txt'), 'bye\n');
    writeFileSync(join(plain, 'from.txt'), 'moving\n');
    let inGit = true;
    try {
      execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: plain, stdio: 'ignore' });
    } catch {
      inGit = false;
    }
    if (inGit) return; // the temp dir sits inside a repository on this machine: nothing to test
    const { info } = await startSession({ state: fx.state, root: plain, signer: fx.signer });
    writeFileSync(join(plain, 'mod.txt'), 'two\n');
    rmSync(join(plain, 'del.txt'));
    renameSync(join(plain, 'from.txt'), join(plain, 'to.txt'));
    mkdirSync(join(plain, 'a/b'), { recursive: true });
    writeFileSync(join(plain, 'a/b/new.txt'), 'new\n');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    const receipt = receiptOf(readFileSync(closed.packagePath));
    assert.deepEqual(
      receipt.files_written.map((row) => [row.path, row.operation, row.from ?? null, row.sources]),
      [
        ['a/b/new.txt', 'created', null, ['git-reconcile']],
        ['del.txt', 'deleted', null, ['git-reconcile']],
        ['mod.txt', 'modified', null, ['git-reconcile']],
        ['to.txt', 'renamed', 'from.txt', ['git-reconcile']],
      ],
    );
  });
});

function changedDigest(root: string, path: string): string {
  return `sha256:${execFileSync('sha256sum', [join(root, path)], { encoding: 'utf8' }).split(' ')[0]}`;
}
