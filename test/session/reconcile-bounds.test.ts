/**
 * What bounds a reconciliation pass, when the agent controls the tree it bounds: the limit of paths
 * compared (files the session creates can push a real change past it), and the time git may take
 * (a FIFO planted where git reads a file keeps it waiting for ever). A limit reached because of the
 * session fails `workspace_reconciled` (`limit-exceeded`), while a tree already past it at the
 * start stays `info` (test/session/reconcile-forged.test.ts); a git command that would wait, or a
 * `commondir` that takes seconds to resolve, fails the pass (`reconcile-failed`) and the close
 * ends. Oracles: what the test wrote, POSIX FIFO semantics, and the package verifier.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  cpSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { captureBaseline } from '../../src/capture/reconcile/baseline.js';
import { NESTED_WATCHED } from '../../src/capture/reconcile/git-state.js';
import { NESTED_LISTED } from '../../src/capture/reconcile/listing.js';
import { diffWorkspace } from '../../src/capture/reconcile/reconcile.js';
import { RECENT_MS, statJson, statOfJson } from '../../src/capture/reconcile/stat.js';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { receiptOfFile, summaryOfFile, tallyAs } from './as-user.js';
import { closePackage, type Fixture, git, makeFixture, packageReceipt, packageRecords } from './fixture.js';

async function verdict(fx: Fixture, pkg: Buffer): Promise<[boolean, string]> {
  const verified = await verifyPackage(pkg, {
    trusted: [toPublicKey(fx.signer.privateKey)],
    now: new Date(),
  });
  const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
  return [check.ok, check.code];
}

function summaryOf(fx: Fixture, pkg: Buffer): Record<string, unknown> {
  const summary = packageRecords(fx, pkg).find((rec) => rec.event.type === 'tally.reconcile.summary')!;
  return (summary.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
}

/** Lets a reader blocked on the FIFO at `path` go (it reads an end of file); nothing when none waits. */
function release(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader (ENXIO), or no FIFO
  }
}

describe('the limit, against files the session creates', () => {
  it('in git: new files that sort first push a real change past the limit, and the pass fails', async () => {
    const fx = await makeFixture('tally-bounds-git-');
    const r = fx.root;
    writeFileSync(join(r, 'z.txt'), 'start\n');
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'z');
    await sleep(RECENT_MS + 200); // the start's stats vouch for the files (a file written just now is always compared)
    // Three files at the start, a limit of five: the start snapshot holds them all.
    const { info } = await startSession({ state: fx.state, root: r, signer: fx.signer, reconcileLimit: 5 });
    writeFileSync(join(r, 'z.txt'), 'the change that matters\n');
    for (let i = 0; i < 6; i++) writeFileSync(join(r, `a${i}.txt`), `${i}\n`);
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      reconcileLimit: 5,
    });
    const pkg = readFileSync(closed.packagePath);
    assert.deepEqual(
      packageReceipt(pkg).files_written.map((row) => row.path),
      ['a0.txt', 'a1.txt', 'a2.txt', 'a3.txt', 'a4.txt'],
    );
    const summary = summaryOf(fx, pkg);
    assert.deepEqual([summary.skipped, summary.skipped_session], [2, 2]);
    assert.deepEqual(await verdict(fx, pkg), [false, 'limit-exceeded']);
  });

  it('outside git: the later snapshot cut by new files is compared only as far as it reaches, and the pass fails', async () => {
    const fx = await makeFixture('tally-bounds-tree-');
    const plain = join(fx.dir, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'm.txt'), 'm\n');
    writeFileSync(join(plain, 'z.txt'), 'z\n');
    try {
      execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: plain, stdio: 'ignore' });
      return; // the temp dir sits inside a repository on this machine: nothing to test
    } catch {
      // not in a repository
    }
    const { info } = await startSession({
      state: fx.state,
      root: plain,
      signer: fx.signer,
      reconcileLimit: 3,
    });
    writeFileSync(join(plain, 'z.txt'), 'changed\n');
    for (const name of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(plain, name), `${name}\n`);
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      reconcileLimit: 3,
    });
    const pkg = readFileSync(closed.packagePath);
    // m.txt and z.txt are past the close's cut: not reported deleted, and counted.
    assert.deepEqual(
      packageReceipt(pkg).files_written.map((row) => [row.path, row.operation]),
      [
        ['a.txt', 'created'],
        ['b.txt', 'created'],
        ['c.txt', 'created'],
      ],
    );
    assert.deepEqual(await verdict(fx, pkg), [false, 'limit-exceeded']);
  });
});

/** `count` empty repositories nested in `root`, named `<prefix>000`…, each a copy of one `git init`. */
function nestedRepositories(root: string, prefix: string, count: number): void {
  const template = join(root, '..', `template-${prefix.replace(/\//g, '-')}`);
  mkdirSync(template);
  git(template, 'init', '-q');
  mkdirSync(join(root, dirname(`${prefix}x`)), { recursive: true });
  for (let i = 0; i < count; i++) {
    const dir = join(root, `${prefix}${String(i).padStart(3, '0')}`);
    mkdirSync(dir);
    cpSync(join(template, '.git'), join(dir, '.git'), { recursive: true });
  }
}

async function bareSession(fx: Fixture, act: () => void): Promise<Buffer> {
  await sleep(RECENT_MS + 200); // the start's stats vouch for the files
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  act();
  return closePackage(fx, info.id);
}

describe('nested repositories past those the listing lists', () => {
  it("the rest of the tree is still compared; only what those repositories hold is counted, as the start's bound", async () => {
    const fx = await makeFixture('tally-bounds-nested-');
    // 101 repositories that sort before every file of the tree: `a000`…`a099` listed, `a100` not.
    nestedRepositories(fx.root, 'a', 101);
    writeFileSync(join(fx.root, 'z.txt'), 'start\n');
    const pkg = await bareSession(fx, () => {
      writeFileSync(join(fx.root, 'src', 'app.js'), 'export const v = 2;\n');
      writeFileSync(join(fx.root, 'z.txt'), 'changed\n');
      rmSync(join(fx.root, 'README.md'));
      writeFileSync(join(fx.root, 'a007', 'in.txt'), 'listed\n');
      writeFileSync(join(fx.root, 'a100', 'in.txt'), 'past the bound\n');
    });
    assert.deepEqual(
      packageReceipt(pkg).files_written.map((row) => [row.path, row.operation]),
      [
        ['README.md', 'deleted'],
        ['a007/in.txt', 'created'],
        ['src/app.js', 'modified'],
        ['z.txt', 'modified'],
      ],
    );
    const summary = summaryOf(fx, pkg);
    assert.deepEqual([summary.skipped, summary.skipped_session ?? 0], [1, 0]);
    assert.deepEqual(await verdict(fx, pkg), [true, 'info']);
  });

  it("past the nested repositories whose own files are watched, an honest session still passes: the rest are the start's bound", async () => {
    const fx = await makeFixture('tally-bounds-watched-');
    // More than are watched, each with git's sample hooks: walked all, they would pass `GIT_STATE_ENTRIES`.
    nestedRepositories(fx.root, 'vendor/r', NESTED_WATCHED + 420);
    const pkg = await bareSession(fx, () => {
      writeFileSync(join(fx.root, 'README.md'), '# changed\n');
      writeFileSync(join(fx.root, 'vendor', 'r000', '.git', 'hooks', 'pre-push'), '#!/bin/sh\n', {
        mode: 0o755,
      });
    });
    assert.deepEqual(
      packageReceipt(pkg).files_written.map((row) => [row.path, row.operation]),
      [
        ['README.md', 'modified'],
        ['vendor/r000/.git/hooks/pre-push', 'created'],
      ],
    );
    assert.deepEqual(await verdict(fx, pkg), [true, 'info']);
  });

  it('a snapshot an earlier version took (no `unlisted`): what it did not list is worked out, not blamed on the session', async () => {
    const fx = await makeFixture('tally-bounds-old-');
    // Nothing sorts after the repositories: such a start kept no `last`.
    nestedRepositories(fx.root, 'z', NESTED_LISTED + 5);
    await sleep(RECENT_MS + 200);
    const { baseline, stat } = await captureBaseline(fx.root);
    const { unlisted, ...old } = statJson(stat!) as { unlisted?: string[] };
    assert.equal(unlisted?.length, 5);
    assert.equal((old as { last?: string }).last, undefined);
    const startStat = statOfJson(old);
    assert.deepEqual(startStat.unlisted, unlisted);
    const same = await diffWorkspace(fx.root, baseline, { startStat });
    assert.deepEqual([same.skippedSession, same.changes.length], [0, 0]);
    // One more repository first in the listing's order pushes a listed one out: the session's doing.
    mkdirSync(join(fx.root, 'a'));
    git(join(fx.root, 'a'), 'init', '-q');
    const pushed = await diffWorkspace(fx.root, baseline, { startStat });
    assert.equal(pushed.skippedSession, 1);
  });

  it('a nested repository the start listed that the session pushes out of the listing fails the pass', async () => {
    const fx = await makeFixture('tally-bounds-pushed-');
    nestedRepositories(fx.root, 'r', 101);
    const pkg = await bareSession(fx, () => {
      // `a` comes first in the listing's order: `r099`, listed at the start, is not listed now.
      mkdirSync(join(fx.root, 'a'));
      git(join(fx.root, 'a'), 'init', '-q');
      writeFileSync(join(fx.root, 'r099', 'new.txt'), 'not seen\n');
    });
    const rows = packageReceipt(pkg).files_written.map((row) => row.path);
    assert.ok(!rows.includes('r099/new.txt'), JSON.stringify(rows));
    assert.ok(rows.includes('a/.git'), JSON.stringify(rows));
    assert.deepEqual(await verdict(fx, pkg), [false, 'limit-exceeded']);
  });
});

describe('what the agent can make the close wait on', () => {
  it('a FIFO at .git/config or .git/index, planted during the session or before it: the close ends and the pass fails', async () => {
    const cases = [
      { file: 'config', before: false },
      { file: 'index', before: false },
      { file: 'index', before: true },
    ];
    await Promise.all(
      cases.map(async ({ file, before }) => {
        const p = makeProject(`tally-fifo-${file}-`);
        const run = (args: string[]) =>
          tallyAs(args, { cwd: p.root, env: p.env, asRoot: true, killAfterMs: 20_000 });
        const plant = () => {
          rmSync(join(p.root, '.git', file));
          execFileSync('mkfifo', [join(p.root, '.git', file)]);
        };
        try {
          assert.equal((await run(['init'])).code, 0);
          if (before) plant();
          const started = await run(['session', 'start']);
          assert.deepEqual([started.hung, started.code], [false, 0], started.stderr);
          if (!before) plant();
          const closed = await run(['session', 'close', '--json']);
          assert.deepEqual([closed.hung, closed.code], [false, 0], `${file}: ${closed.stderr}`);
          const pkg = String(jsonOut(closed).package);
          const error = summaryOfFile(pkg).error as { code: string; message: string };
          assert.equal(error.code, before ? 'baseline' : 'git-state', error.message);
          assert.match(error.message, new RegExp(`\\.git/${file} is a FIFO`));
          assert.deepEqual(receiptOfFile(pkg).files_written, []);
          const verified = await run(['verify', pkg, '--json']);
          const checks = (JSON.parse(verified.stdout) as { checks: { check: string; code: string }[] })
            .checks;
          assert.equal(checks.find((c) => c.check === 'workspace_reconciled')?.code, 'reconcile-failed');
        } finally {
          release(join(p.root, '.git', file));
        }
      }),
    );
  });

  it("a FIFO for the start snapshot kept beside the session, in the project's .tally/: taken as altered", async () => {
    const p = makeProject('tally-fifo-snapshot-');
    const run = (args: string[]) =>
      tallyAs(args, { cwd: p.root, env: p.env, asRoot: true, killAfterMs: 20_000 });
    assert.equal((await run(['init'])).code, 0);
    assert.equal((await run(['session', 'start'])).code, 0);
    const sessions = join(p.root, '.tally', 'sessions');
    const kept = join(sessions, readFileSync(join(sessions, 'current'), 'utf8').trim(), 'baseline-stat.json');
    rmSync(kept);
    execFileSync('mkfifo', [kept]);
    try {
      const closed = await run(['session', 'close', '--json']);
      assert.deepEqual([closed.hung, closed.code], [false, 0], closed.stderr);
      const pkg = String(jsonOut(closed).package);
      assert.equal(summaryOfFile(pkg).baseline, 'altered');
      const verified = await run(['verify', pkg, '--json']);
      const checks = (JSON.parse(verified.stdout) as { checks: { check: string; code: string }[] }).checks;
      assert.equal(checks.find((c) => c.check === 'workspace_reconciled')?.code, 'baseline-altered');
    } finally {
      release(kept);
    }
  });

  it('a sparse file of a terabyte: read only until the deadline, the close ends, the pass fails', async () => {
    const fx = await makeFixture('tally-sparse-');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    // Made in a moment; read whole, hours of zeros.
    const big = join(fx.root, 'big.bin');
    closeSync(openSync(big, 'w'));
    truncateSync(big, 2 ** 40);
    const closing = closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      reconcileTimeoutMs: 1500,
    });
    const outcome = await Promise.race([closing, sleep(120_000).then(() => 'hung' as const)]);
    assert.notEqual(outcome, 'hung', 'the close was still reading after 120 s');
    const pkg = readFileSync((await closing).packagePath);
    const unreadable = summaryOf(fx, pkg).unreadable as { paths: { path: string; code: string }[] };
    // The fixture's files written just before the start are compared too; past the deadline, unread.
    assert.deepEqual(unreadable.paths[0], { path: 'big.bin', code: 'timeout' });
    assert.ok(
      unreadable.paths.every((u) => u.code === 'timeout'),
      JSON.stringify(unreadable),
    );
    assert.deepEqual(await verdict(fx, pkg), [false, 'unreadable']);
  });

  it('a commondir of 64 KiB of steps through folders 2,000 deep: resolving it stops at the deadline, the close ends, the pass fails', async () => {
    const fx = await makeFixture('tally-deep-commondir-');
    const bottom = join(fx.dir, ...Array<string>(2000).fill('a'));
    mkdirSync(bottom, { recursive: true });
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    // Written during the session: each `../a` is looked up from the root, through the 2,000
    // folders again (seconds in all); resolved before the pass runs any git command.
    const steps = '../a/'.repeat(Math.floor((64 * 1024 - bottom.length - 2) / 5));
    writeFileSync(join(fx.root, '.git', 'commondir'), `${bottom}/${steps}\n`);
    try {
      const closing = closeSession({
        state: fx.state,
        session: readSessionInfo(fx.state, info.id),
        signer: fx.signer,
        reconcileTimeoutMs: 100,
      });
      // Unreferenced: a close that ends leaves no timer holding the test's process open.
      const hung = sleep(120_000, 'hung' as const, { ref: false });
      const outcome = await Promise.race([closing, hung]);
      assert.notEqual(outcome, 'hung', 'the close was still running after 120 s');
      const pkg = readFileSync((await closing).packagePath);
      const error = summaryOf(fx, pkg).error as { code: string; message: string };
      assert.equal(error.code, 'timeout');
      // Stopped while resolving, not at the next git command after it.
      assert.match(error.message, /^resolving .* did not finish within the pass's 100 ms/);
      assert.deepEqual(await verdict(fx, pkg), [false, 'reconcile-failed']);
    } finally {
      // A folder at a time from the bottom: removed whole, the chain is deeper than Node's rm recurses.
      for (let folder = bottom; folder !== fx.dir; folder = dirname(folder))
        rmSync(folder, { recursive: true });
    }
  });

  it('a nested repository whose HEAD is a FIFO: git is stopped at the deadline, the close ends, the pass fails', async () => {
    const fx = await makeFixture('tally-fifo-nested-');
    const head = join(fx.root, 'vendor', '.git', 'HEAD');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    // What git reads to decide whether vendor/ holds a repository of its own.
    mkdirSync(join(fx.root, 'vendor', '.git', 'objects'), { recursive: true });
    mkdirSync(join(fx.root, 'vendor', '.git', 'refs'));
    execFileSync('mkfifo', [head]);
    writeFileSync(join(fx.root, 'vendor', 'payload.js'), 'payload\n');
    const closing = closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      reconcileTimeoutMs: 1500,
    });
    const outcome = await Promise.race([closing, sleep(20_000).then(() => 'hung' as const)]);
    // Whatever happened, no git is left waiting on the FIFO.
    for (let i = 0; i < 5; i++) release(head);
    assert.notEqual(outcome, 'hung', 'the close was still running after 20 s');
    const pkg = readFileSync((await closing).packagePath);
    const error = summaryOf(fx, pkg).error as { code: string };
    assert.equal(error.code, 'timeout');
    assert.deepEqual(await verdict(fx, pkg), [false, 'reconcile-failed']);
  });
});
