/**
 * Reconciliation of what the pass cannot read. The agent, running as the tree's owner, can make a
 * file or a folder it created unreadable (and a file larger than a single read): the pass must not
 * take such a path as absent. A file it cannot read is a row whose content is unknown, a folder it
 * cannot list is named, and verification fails `workspace_reconciled` (`unreadable`) — in git,
 * outside git, and through `tally wrap`. A file over 2 GiB is hashed whole. The tests run as root,
 * for whom nothing is unreadable: the sessions run as uid 65534 (./as-user.ts). Oracles: the
 * permissions the test set (POSIX), `sha256sum` for the digest of the large file, and the
 * package verifier.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import { makeProject, type Project } from '../cli/tally-process.js';
import { handOver, receiptOfFile, summaryOfFile, tallyAs } from './as-user.js';
import { git, makeFixture, packageReceipt } from './fixture.js';

async function run(p: Project, args: string[], cwd = p.root): Promise<Record<string, unknown>> {
  const ran = await tallyAs(args, { cwd, env: p.env });
  assert.equal(ran.code, 0, `tally ${args.join(' ')} exited ${ran.code}:\n${ran.stderr}`);
  return ran.stdout.trim().startsWith('{') ? (JSON.parse(ran.stdout) as Record<string, unknown>) : {};
}

/** `tally verify --json` as the other user: its exit code and the workspace_reconciled check. */
async function workspaceCheck(p: Project, pkg: string): Promise<[number | null, string, unknown]> {
  const ran = await tallyAs(['verify', pkg, '--json'], { cwd: p.root, env: p.env });
  const checks = (JSON.parse(ran.stdout) as { checks: { check: string; code: string; detail: unknown }[] })
    .checks;
  const check = checks.find((c) => c.check === 'workspace_reconciled')!;
  return [ran.code, check.code, check.detail];
}

function rows(pkg: string): [string, string, boolean][] {
  return receiptOfFile(pkg).files_written.map((row) => [row.path, row.operation, row.after === undefined]);
}

/** The unreadable paths the close's summary names: [path, code, folder]. */
function unreadable(pkg: string): [string, string, boolean][] {
  const listed = summaryOfFile(pkg).unreadable as { paths: { path: string; code: string; folder?: true }[] };
  return listed.paths.map((u) => [u.path, u.code, u.folder === true]);
}

/** The agent's moves: a folder it can no longer list holding a new file, a new file it cannot read. */
function hideFromReading(root: string, folder: string): void {
  writeFileSync(join(root, folder, 'helper.js'), 'export const helper = 1;\n');
  writeFileSync(join(root, 'new.js'), 'new\n');
  chmodSync(join(root, 'new.js'), 0o000);
  chmodSync(join(root, folder), 0o311);
}

describe('reconciliation of what it cannot read', () => {
  it('in git: a file it cannot read is a row, a folder it cannot list is named, and the pass fails', async () => {
    const p = makeProject('tally-unreadable-git-');
    // A repository nested in the tree before the session (listed like the tree).
    mkdirSync(join(p.root, 'vendor'));
    writeFileSync(join(p.root, 'vendor', 'lib.js'), 'lib\n');
    git(join(p.root, 'vendor'), 'init', '-q');
    handOver(p.dir);
    await run(p, ['init']);
    await run(p, ['session', 'start']);
    writeFileSync(join(p.root, 'src', 'app.js'), 'export const v = 2;\n');
    hideFromReading(p.root, 'src');
    writeFileSync(join(p.root, 'vendor', 'added.js'), 'added\n');
    chmodSync(join(p.root, 'vendor'), 0o311);
    const closed = await run(p, ['session', 'close', '--json']);
    const pkg = String(closed.package);
    // new.js: there, content unknown (no digest); src/app.js: changed, read through the folder it
    // can still search; src/helper.js cannot be found: its folder is named instead.
    assert.deepEqual(rows(pkg), [
      ['new.js', 'created', true],
      ['src/app.js', 'modified', false],
    ]);
    assert.deepEqual(unreadable(pkg), [
      ['new.js', 'EACCES', false],
      ['src', 'EACCES', true],
      ['vendor', 'EACCES', true],
    ]);
    const [code, check] = await workspaceCheck(p, pkg);
    assert.deepEqual([code, check], [1, 'unreadable']);
  });

  it('outside git: the tree snapshot says the same', async () => {
    const p = makeProject('tally-unreadable-tree-');
    const plain = join(p.dir, 'plain');
    mkdirSync(join(plain, 'lib'), { recursive: true });
    writeFileSync(join(plain, 'lib', 'main.js'), 'main\n');
    try {
      execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: plain, stdio: 'ignore' });
      return; // the temp dir sits inside a repository on this machine: nothing to test
    } catch {
      // not in a repository: the close compares tree snapshots
    }
    handOver(p.dir);
    await run(p, ['init'], plain);
    await run(p, ['session', 'start'], plain);
    hideFromReading(plain, 'lib');
    const closed = await run(p, ['session', 'close', '--json'], plain);
    const pkg = String(closed.package);
    assert.equal(summaryOfFile(pkg).mode, 'tree');
    assert.deepEqual(rows(pkg), [['new.js', 'created', true]]);
    assert.deepEqual(unreadable(pkg), [
      ['lib', 'EACCES', true],
      ['new.js', 'EACCES', false],
    ]);
    const [code, check] = await workspaceCheck(p, pkg);
    assert.deepEqual([code, check], [1, 'unreadable']);
  });

  it('tally wrap: the command made a file and a folder unreadable; wrap says so and its session fails', async () => {
    const p = makeProject('tally-unreadable-wrap-');
    handOver(p.dir);
    await run(p, ['init']);
    const script = 'echo n > new.js && chmod 000 new.js && mkdir gen && echo x > gen/out.js && chmod 311 gen';
    const out = await run(p, ['wrap', '--json', '--', 'sh', '-c', script]);
    assert.equal(out.changes, 1);
    assert.deepEqual(out.unreadable, ['gen', 'new.js']);
    assert.deepEqual(rows(String(out.package)), [['new.js', 'created', true]]);
    const [code, check] = await workspaceCheck(p, String(out.package));
    assert.deepEqual([code, check], [1, 'unreadable']);
  });
});

describe('reconciliation of files larger than one read', () => {
  it('a tracked file grown past 2 GiB is modified, hashed whole, not deleted', {
    timeout: 300_000,
  }, async () => {
    const fx = await makeFixture('tally-large-');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    // Sparse, past the most a single read gives (a new file takes the same path: read whole too).
    truncateSync(join(fx.root, 'README.md'), 2 ** 31 + 1);
    const [closed, sum] = await Promise.all([
      closeSession({ state: fx.state, session: readSessionInfo(fx.state, info.id), signer: fx.signer }),
      promisify(execFile)('sha256sum', ['README.md'], { cwd: fx.root }),
    ]);
    const pkg = readFileSync(closed.packagePath);
    assert.deepEqual(
      packageReceipt(pkg).files_written.map((row) => [row.path, row.operation, row.after]),
      [['README.md', 'modified', `sha256:${sum.stdout.split(' ')[0]}`]],
    );
    const verified = await verifyPackage(pkg, {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(),
    });
    assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => !c.ok)));
  });
});
