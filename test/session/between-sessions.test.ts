/**
 * What changes in the tree after a session closed and before the next one starts (a detached
 * process the agent left behind, a person's commit) is in the next session's receipt and
 * `tally verify` output, never as the new session's doing. Real git, real processes, the real CLI.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, type Project, runProcess, runTally } from '../cli/tally-process.js';
import { removeTempDir, tempDir } from '../temp.js';
import { handOver, receiptOfFile, tallyAs } from './as-user.js';
import { git } from './fixture.js';

async function ok(p: Pick<Project, 'tally'>, args: string[]): Promise<string> {
  const ran = await p.tally(args);
  assert.equal(ran.code, 0, `tally ${args.join(' ')}: ${ran.stderr}`);
  return ran.stdout;
}

/** One session started and closed with nothing done in it: its package's path. */
async function emptySession(p: Pick<Project, 'tally'>): Promise<{ id: string; pkg: string }> {
  const id = (await ok(p, ['session', 'start'])).trim().split('\n').pop()!;
  const pkg = (await ok(p, ['session', 'close'])).trim().split('\n').pop()!;
  return { id, pkg };
}

interface Since {
  state: string;
  session?: string;
  commit?: { end?: string; start?: string };
  changed?: Array<{ path: string; operation: string }>;
  reason?: string;
}

/** The receipt and verification of a package, as `tally receipt show` and `tally verify` print them. */
async function evidence(p: Pick<Project, 'tally'>, pkg: string) {
  const receipt = jsonOut({
    code: 0,
    stderr: '',
    stdout: await ok(p, ['receipt', 'show', pkg, '--json']),
  }) as {
    session: { since?: Since };
    files_written: Array<{ path: string }>;
  };
  const ran = await p.tally(['verify', pkg, '--json']);
  const verified = jsonOut(ran) as {
    ok: boolean;
    checks: Array<{ check: string; ok: boolean; code: string }>;
  };
  const text = await ok(p, ['receipt', 'show', pkg]);
  return { receipt, verified, between: verified.checks.find((c) => c.check === 'between_sessions')!, text };
}

async function project(): Promise<Project> {
  const p = makeProject('tally-between-');
  await ok(p, ['init']);
  return p;
}

describe('between sessions', () => {
  it('a detached process that writes after the close is in the next session’s receipt', async () => {
    const p = await project();
    try {
      const id = (await ok(p, ['session', 'start'])).trim().split('\n').pop()!;
      const sealed = join(p.root, '.tally', 'packages', `${id}.tally`);
      // What an agent does: a writer of its own session, detached, that waits for the seal.
      const script = `i=0; while [ ! -e '${sealed}' ] && [ $i -lt 3000 ]; do sleep 0.05; i=$((i+1)); done; echo evil >> src/app.js`;
      const started = await runProcess('sh', ['-c', 'setsid sh -c "$WRITER" </dev/null >/dev/null 2>&1 &'], {
        cwd: p.root,
        env: { ...p.env, WRITER: script },
      });
      assert.equal(started.code, 0);
      await ok(p, ['session', 'close']);
      for (let i = 0; i < 1000 && !readFileSync(join(p.root, 'src/app.js'), 'utf8').includes('evil'); i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.match(readFileSync(join(p.root, 'src/app.js'), 'utf8'), /evil/);
      const first = await evidence(p, sealed);
      assert.ok(
        !first.receipt.files_written.some((f) => f.path === 'src/app.js'),
        'the write came after the close',
      );

      const second = await emptySession(p);
      const { receipt, verified, between, text } = await evidence(p, second.pkg);
      assert.equal(receipt.session.since?.state, 'changed');
      assert.equal(receipt.session.since?.session, id);
      assert.deepEqual(
        receipt.session.since?.changed?.map((c) => [c.path, c.operation]),
        [['src/app.js', 'modified']],
      );
      // Not the new session's doing: no row of its own.
      assert.ok(!receipt.files_written.some((f) => f.path === 'src/app.js'));
      assert.match(text, new RegExp(`changed after session ${id} closed, before this one started`));
      assert.match(text, /modified +src\/app\.js +\[between sessions\]/);
      assert.equal(between.code, 'info');
      assert.equal(verified.ok, true, 'a report, not a failure');
      // The receipt page says it too, apart from the session's own rows.
      const page = join(p.dir, 'receipt.html');
      await ok(p, ['receipt', 'render', second.pkg, '-o', page]);
      const html = readFileSync(page, 'utf8');
      const before = html.slice(html.indexOf('<dt>Before this session</dt>'));
      assert.ok(html.includes('<dt>Before this session</dt>'), 'the page has the section');
      assert.match(
        before.slice(0, before.indexOf('</dd>')),
        /changed after session .* closed[\s\S]*src\/app\.js/,
      );
    } finally {
      removeTempDir(p.dir);
    }
  });

  it('nothing changed between two sessions: unchanged', async () => {
    const p = await project();
    try {
      const first = await emptySession(p);
      const second = await emptySession(p);
      const { receipt, verified, between } = await evidence(p, second.pkg);
      assert.equal(receipt.session.since?.state, 'unchanged');
      assert.equal(receipt.session.since?.session, first.id);
      assert.equal(receipt.session.since?.changed, undefined);
      assert.equal(between.code, 'ok');
      assert.equal(verified.ok, true);
      // The first session of the project says so.
      const { receipt: before } = await evidence(p, first.pkg);
      assert.equal(before.session.since?.state, 'none');
    } finally {
      removeTempDir(p.dir);
    }
  });

  it('a commit between sessions: HEAD moved, and the paths it changed', async () => {
    const p = await project();
    try {
      await emptySession(p);
      const before = git(p.root, 'rev-parse', 'HEAD').trim();
      writeFileSync(join(p.root, 'README.md'), '# changed by a person\n');
      git(p.root, 'commit', '-qam', 'by hand');
      const after = git(p.root, 'rev-parse', 'HEAD').trim();
      const second = await emptySession(p);
      const { receipt, between } = await evidence(p, second.pkg);
      assert.equal(receipt.session.since?.state, 'changed');
      assert.deepEqual(receipt.session.since?.commit, { end: before, start: after });
      assert.deepEqual(
        receipt.session.since?.changed?.map((c) => [c.path, c.operation]),
        [['README.md', 'modified']],
      );
      assert.equal(between.code, 'info');
    } finally {
      removeTempDir(p.dir);
    }
  });

  it('the previous package deleted: reported, not passed over', async () => {
    const p = await project();
    try {
      const first = await emptySession(p);
      rmSync(first.pkg);
      writeFileSync(join(p.root, 'src/app.js'), 'export const v = 2;\n');
      const second = await emptySession(p);
      const { receipt, verified, between } = await evidence(p, second.pkg);
      assert.equal(receipt.session.since?.state, 'missing');
      assert.equal(receipt.session.since?.session, first.id);
      assert.match(receipt.session.since?.reason ?? '', /removed/);
      assert.equal(between.code, 'info');
      assert.equal(verified.ok, true);
    } finally {
      removeTempDir(p.dir);
    }
  });

  it('an end state edited in the package: the pointer says it was replaced; without it, its signature fails', async () => {
    const p = await project();
    try {
      const first = await emptySession(p);
      // The close's summary, its end state rewritten to hide a change to src/app.js; the signature kept.
      const lines = readFileSync(first.pkg, 'utf8').split('\n');
      const at = lines.findIndex((line) => {
        try {
          const payload = JSON.parse(Buffer.from(JSON.parse(line).payload, 'base64').toString('utf8'));
          return payload.event?.type === 'tally.reconcile.summary';
        } catch {
          return false;
        }
      });
      assert.ok(at > 0, 'the package holds the close summary');
      const envelope = JSON.parse(lines[at]!);
      const record = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
      record.event.extensions['dev.tally.reconcile'].end.dirty = { 'src/app.js': 'sha256:' + '0'.repeat(64) };
      envelope.payload = Buffer.from(JSON.stringify(record)).toString('base64');
      lines[at] = JSON.stringify(envelope);
      writeFileSync(first.pkg, lines.join('\n'));
      writeFileSync(join(p.root, 'src/app.js'), 'export const v = 2;\n');
      const second = await emptySession(p);
      const { receipt } = await evidence(p, second.pkg);
      assert.equal(receipt.session.since?.state, 'unverified');
      assert.match(
        receipt.session.since?.reason ?? '',
        /not the package .* the pointer names: it was replaced/,
      );
      // Without the pointer (the agent can remove it), the edited package put in place of the last
      // one: the summary's own signature refuses it.
      for (const name of readdirSync(join(p.home, 'projects'))) rmSync(join(p.home, 'projects', name));
      writeFileSync(second.pkg, readFileSync(first.pkg));
      const third = await emptySession(p);
      const { receipt: last } = await evidence(p, third.pkg);
      assert.equal(last.session.since?.state, 'unverified');
      assert.match(last.session.since?.reason ?? '', /reconcile summary .* does not verify/);
    } finally {
      removeTempDir(p.dir);
    }
  });

  it('a file that is no package named as the previous one: said, read in bounded pieces', async () => {
    const p = await project();
    try {
      const first = await emptySession(p);
      // The agent removes the pointer and names a file of its own, of many short lines and no
      // close summary, in the closed session's state.
      for (const name of readdirSync(join(p.home, 'projects'))) rmSync(join(p.home, 'projects', name));
      const junk = join(p.dir, 'junk.tally');
      writeFileSync(junk, 'x\n'.repeat(2_000_000));
      const state = join(p.root, '.tally', 'sessions', first.id, 'session.json');
      const info = JSON.parse(readFileSync(state, 'utf8'));
      writeFileSync(state, JSON.stringify({ ...info, package: junk }));
      const second = await emptySession(p);
      const { receipt, between } = await evidence(p, second.pkg);
      assert.equal(receipt.session.since?.state, 'unverified');
      assert.match(receipt.session.since?.reason ?? '', /holds no close summary among its last 16 lines/);
      assert.equal(between.code, 'info');
    } finally {
      removeTempDir(p.dir);
    }
  });

  it('outside git: the tree snapshot of the end against the start', async () => {
    const dir = tempDir('tally-between-tree-');
    const root = join(dir, 'plain');
    mkdirSync(join(root, 'src'), { recursive: true });
    writeFileSync(join(root, 'src/app.js'), 'export const v = 1;\n');
    writeFileSync(join(root, 'notes.txt'), 'keep\n');
    const env = { PATH: process.env.PATH, HOME: dir, TALLY_HOME: join(dir, 'home'), NO_COLOR: '1' };
    const p = { tally: (args: string[]) => runTally(args, { cwd: root, env }) };
    try {
      await ok(p, ['init']);
      const first = await emptySession(p);
      writeFileSync(join(root, 'src/app.js'), 'evil\n');
      rmSync(join(root, 'notes.txt'));
      const second = await emptySession(p);
      const { receipt, between } = await evidence(p, second.pkg);
      assert.equal(receipt.session.since?.state, 'changed');
      assert.equal(receipt.session.since?.session, first.id);
      assert.deepEqual(
        receipt.session.since?.changed?.map((c) => [c.path, c.operation]),
        [
          ['notes.txt', 'deleted'],
          ['src/app.js', 'modified'],
        ],
      );
      assert.equal(between.code, 'info');
      assert.ok(existsSync(first.pkg));
    } finally {
      removeTempDir(dir);
    }
  });

  it('a folder the comparison cannot list: not said unchanged', async () => {
    const p = makeProject('tally-between-unlistable-');
    try {
      mkdirSync(join(p.root, 'src', 'lib'));
      writeFileSync(join(p.root, 'src', 'lib', 'a.js'), 'a\n');
      git(p.root, 'add', '.');
      git(p.root, 'commit', '-qm', 'lib');
      handOver(p.dir);
      // As the agent's user (as root nothing is unreadable).
      const run = async (args: string[]) => {
        const ran = await tallyAs(args, { cwd: p.root, env: p.env });
        assert.equal(ran.code, 0, `tally ${args.join(' ')}: ${ran.stderr}`);
        return ran.stdout.trim().split('\n').pop()!;
      };
      await run(['init']);
      const first = await run(['session', 'start']);
      await run(['session', 'close']);
      // After the close: a file made in a folder that is then made unlistable.
      writeFileSync(join(p.root, 'src', 'lib', 'b.js'), 'new\n');
      chmodSync(join(p.root, 'src', 'lib'), 0o311);
      await run(['session', 'start']);
      chmodSync(join(p.root, 'src', 'lib'), 0o755);
      const pkg = await run(['session', 'close']);
      const since = receiptOfFile(pkg).session.since!;
      assert.equal(since.session, first);
      assert.notEqual(since.state, 'unchanged', 'src/lib could not be listed: b.js was not seen');
      assert.equal(since.state, 'incomplete');
      const shown = await tallyAs(['receipt', 'show', pkg], { cwd: p.root, env: p.env });
      assert.doesNotMatch(shown.stdout, /the tree is as session/);
      assert.match(shown.stdout, /1 path\(s\) could not be read/);
      const verified = await tallyAs(['verify', pkg, '--json'], { cwd: p.root, env: p.env });
      const between = (
        JSON.parse(verified.stdout) as {
          checks: Array<{ check: string; code: string; detail: { unreadable?: unknown } }>;
        }
      ).checks.find((c) => c.check === 'between_sessions')!;
      assert.equal(between.code, 'info');
      assert.deepEqual(between.detail.unreadable, {
        count: 1,
        paths: [{ path: 'src/lib', code: 'EACCES', folder: true }],
      });
    } finally {
      removeTempDir(p.dir);
    }
  });
});
