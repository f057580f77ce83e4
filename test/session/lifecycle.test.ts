/**
 * The session lifecycle through the library: the start baseline (checked against git and
 * sha256sum), deterministic sealing, closing twice, recovery of a torn log line, bad events.
 * Oracles: the issue text, git's and sha256sum's own output, and the package layout.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BoundaryError } from '../../src/boundary/prepare.js';
import { type CheckedRecord, readLogLines, verifyLogFile } from '../../src/evidence/log/reader.js';
import { buildPackage } from '../../src/evidence/package/build.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, recordEvent, startSession } from '../../src/session/lifecycle.js';
import { gitTopLevel } from '../../src/session/paths.js';
import { logPath, readSessionInfo, SessionError } from '../../src/session/store.js';
import { git, makeFixture, runSession, steppingClock, toolBefore, variedEvents } from './fixture.js';

function sha256sum(path: string): string {
  return `sha256:${execFileSync('sha256sum', [path], { encoding: 'utf8' }).split(' ')[0]}`;
}

/** The records of a log, decoded from their envelopes without Tally's reader. */
function logRecords(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(Buffer.from(JSON.parse(line).payload, 'base64').toString()));
}

const trustedOf = (fx: Awaited<ReturnType<typeof makeFixture>>) => [fx.signer.key.publicKey];

describe('session start baseline', () => {
  it('records git HEAD and the digests of files already dirty or untracked', async () => {
    const fx = await makeFixture('tally-baseline-');
    const r = fx.root;
    writeFileSync(join(r, 'README.md'), '# changed before the session\n');
    writeFileSync(join(r, 'notes.txt'), 'untracked\n');
    writeFileSync(join(r, 'a b.txt'), 'a name with a space\n');
    mkdirSync(join(r, 'deep/er'), { recursive: true });
    writeFileSync(join(r, 'deep/er/x.bin'), Buffer.from([0, 1, 2, 255]));
    rmSync(join(r, 'src/app.js'));
    mkdirSync(join(r, '.tally/sessions'), { recursive: true });
    writeFileSync(join(r, '.tally/sessions/current'), 'state, not work\n');
    const { info } = await startSession({ state: fx.state, root: r, signer: fx.signer });
    const [first] = logRecords(logPath(fx.state, info.id));
    const event = first!.event as Record<string, unknown>;
    assert.equal(event.type, 'session.start');
    const workspace = (event.extensions as Record<string, Record<string, unknown>>)['dev.tally.workspace']!;
    assert.equal(workspace.root, r);
    const baseline = workspace.baseline as { commit?: string; dirty: Record<string, string | null> };
    assert.equal(baseline.commit, git(r, 'rev-parse', 'HEAD').trim());
    assert.deepEqual(baseline.dirty, {
      'README.md': sha256sum(join(r, 'README.md')),
      'a b.txt': sha256sum(join(r, 'a b.txt')),
      'deep/er/x.bin': sha256sum(join(r, 'deep/er/x.bin')),
      'notes.txt': sha256sum(join(r, 'notes.txt')),
      'src/app.js': null,
    });
  });

  it('has no commit in a repository without one, and is a tree snapshot outside git', async () => {
    const fx = await makeFixture('tally-baseline-');
    const fresh = join(fx.dir, 'fresh');
    mkdirSync(fresh);
    git(fresh, 'init', '-q');
    writeFileSync(join(fresh, 'f.txt'), 'x');
    const plain = join(fx.dir, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'f.txt'), 'x');
    const baselineOf = async (root: string) => {
      const state = join(fx.dir, `state-${root.length}`);
      const { info } = await startSession({ state, root, signer: fx.signer });
      const event = logRecords(logPath(state, info.id))[0]!.event as Record<string, unknown>;
      return (event.extensions as Record<string, Record<string, unknown>>)['dev.tally.workspace']!.baseline;
    };
    const { git_state, stat, config_places, ...rest } = (await baselineOf(fresh)) as {
      git_state: Record<string, string>;
      stat: { files: number; skipped: number };
      config_places: Record<string, string>;
    };
    assert.deepEqual(rest, { dirty: { 'f.txt': sha256sum(join(fresh, 'f.txt')) } });
    // Where this process's git finds the user's config: read there again at the close.
    assert.equal(config_places.HOME, process.env.HOME);
    // Tally's own stat snapshot of the tree's one file, kept beside the session.
    assert.deepEqual([stat.files, stat.skipped], [1, 0]);
    // git's own config and hooks, each with its digest at the start.
    assert.equal(git_state['.git/config'], sha256sum(join(fresh, '.git/config')));
    for (const path of Object.keys(git_state))
      assert.match(path, /^\.git\/(config$|config-in-effect$|hooks\/|info\/)/);
    // The settings git runs it with beyond its own config (the user's, the system's): a digest.
    assert.match(git_state['.git/config-in-effect']!, /^sha256:[0-9a-f]{64}$/);
    // Outside any repository (the temp dir may still sit inside one: only check when it does not).
    if (gitTopLevel(plain) === null) {
      // Outside git the baseline is a tree snapshot kept beside the session: one file hashed.
      const tree = ((await baselineOf(plain)) as { tree?: { files: number; skipped: number } }).tree;
      assert.deepEqual({ files: tree?.files, skipped: tree?.skipped }, { files: 1, skipped: 0 });
    } else assert.equal(typeof ((await baselineOf(plain)) as { commit?: unknown }).commit, 'string');
  });
});

describe('sealing is deterministic', () => {
  it('buildPackage twice on the same records, and the streamed close, give the same bytes', async () => {
    const fx = await makeFixture('tally-det-');
    const run = await runSession(fx, variedEvents(fx.root), { clock: steppingClock('2026-04-01T08:00:00Z') });
    const path = logPath(fx.state, run.info.id);
    const checked: CheckedRecord[] = [];
    const verification = await verifyLogFile(path, {
      trusted: trustedOf(fx),
      onRecord: (c) => checked.push(c),
    });
    assert.equal(verification.ok, true);
    const lines: Buffer[] = [];
    for await (const { line } of readLogLines(path)) lines.push(Buffer.from(line));
    const a = buildPackage(lines, checked, fx.signer).bytes;
    const b = buildPackage(lines, checked, fx.signer).bytes;
    assert.ok(a.equals(b), 'two builds differ');
    assert.ok(a.equals(run.bytes), 'buildPackage and the package written at close differ');
    // The package's records are the log's lines, byte for byte, between header and seal.
    assert.ok(run.bytes.includes(readFileSync(path)), 'the log is not embedded verbatim');
  });
});

describe('closing', () => {
  it('closing twice is an error that changes nothing, even with a stale view of the session', async () => {
    const fx = await makeFixture('tally-close-');
    const clock = steppingClock('2026-04-01T08:00:00Z');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer, clock });
    const stale = readSessionInfo(fx.state, info.id);
    const first = await closeSession({ state: fx.state, session: stale, signer: fx.signer, clock });
    const infoPath = join(fx.state, 'sessions', info.id, 'session.json');
    const before = {
      pkg: readFileSync(first.packagePath),
      info: readFileSync(infoPath),
      log: readFileSync(logPath(fx.state, info.id)),
      mtime: statSync(first.packagePath).mtimeMs,
    };
    for (const session of [readSessionInfo(fx.state, info.id), stale]) {
      await assert.rejects(
        closeSession({ state: fx.state, session, signer: fx.signer, clock }),
        (e) => e instanceof SessionError && e.code === 'already-closed',
      );
    }
    // An event with the stale view is refused too, and lands nowhere.
    await assert.rejects(
      recordEvent({
        state: fx.state,
        session: stale,
        signer: fx.signer,
        event: toolBefore('x', 'Read', { file_path: 'README.md' }),
        source: 'hook',
        clock,
      }),
      (e) => e instanceof SessionError && e.code === 'already-closed',
    );
    assert.ok(readFileSync(first.packagePath).equals(before.pkg));
    assert.ok(readFileSync(infoPath).equals(before.info));
    assert.ok(readFileSync(logPath(fx.state, info.id)).equals(before.log));
    assert.equal(statSync(first.packagePath).mtimeMs, before.mtime);
  });

  it('a session whose writer died mid-line can be closed: the torn bytes are quarantined and reported', async () => {
    const fx = await makeFixture('tally-torn-');
    const clock = steppingClock('2026-04-01T08:00:00Z');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer, clock });
    await recordEvent({
      state: fx.state,
      session: info,
      signer: fx.signer,
      event: toolBefore('c1', 'Read', { file_path: 'README.md' }),
      source: 'hook',
      clock,
    });
    const path = logPath(fx.state, info.id);
    const intact = statSync(path).size;
    const torn = Buffer.from('{"payload":"eyJldmVudCI6eyJjYWxsIjp7ImlkIjoiYzIi');
    appendFileSync(path, torn);
    const closed = await closeSession({ state: fx.state, session: info, signer: fx.signer, clock });
    assert.ok(closed.recovered, 'the torn tail was not reported');
    assert.equal(closed.recovered.offset, intact);
    assert.equal(closed.recovered.bytes, torn.length);
    assert.ok(readFileSync(closed.recovered.quarantinePath).equals(torn));
    assert.equal(closed.records, 4); // start, the read, the reconcile summary, end
    const result = await verifyPackage(readFileSync(closed.packagePath), {
      trusted: trustedOf(fx),
      now: new Date(),
    });
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    assert.ok(!readFileSync(closed.packagePath).includes(torn), 'torn bytes leaked into the package');
  });
});

describe('recording events', () => {
  it('an invalid event names the JSON pointer at fault and is recorded only as tally.ingest.rejected', async () => {
    const fx = await makeFixture('tally-bad-');
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    const path = logPath(fx.state, info.id);
    const cases: [unknown, string][] = [
      [{ type: 'tool.before', path: 'native', tool: { origin: 'native', name: 'Read' } }, '/call'],
      [{ ...toolBefore('c', 'Read', {}), time: 'yesterday' }, '/time'],
      [[1, 2], '/'],
    ];
    for (const [event, pointer] of cases) {
      await assert.rejects(
        recordEvent({ state: fx.state, session: info, signer: fx.signer, event, source: 'hook' }),
        (e) => e instanceof BoundaryError && e.code === 'bad-event' && e.message.includes(pointer),
        pointer,
      );
    }
    const records = logRecords(path) as {
      event: { type: string; extensions?: Record<string, Record<string, unknown>> };
    }[];
    assert.deepEqual(
      records.map((r) => r.event.type),
      ['session.start', 'tally.ingest.rejected', 'tally.ingest.rejected', 'tally.ingest.rejected'],
    );
    const facts = records
      .slice(1)
      .map((r) => (r.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.rejected']!);
    assert.deepEqual(
      facts.map((f) => f.pointer),
      ['/call', '/time', ''],
    );
    for (const f of facts) assert.match(String(f.digest), /^sha256:[0-9a-f]{64}$/);
    rmSync(fx.dir, { recursive: true, force: true });
  });

  it('an event type this AHP snapshot does not define is kept, with its unknown fields', async () => {
    const fx = await makeFixture('tally-unknown-');
    const run = await runSession(fx, [{ type: 'vendor.custom.note', note: { text: 'kept' }, extra: [1, 2] }]);
    const records = logRecords(logPath(fx.state, run.info.id));
    const kept = records[1]!.event as Record<string, unknown>;
    assert.equal(kept.type, 'vendor.custom.note');
    assert.deepEqual(kept.note, { text: 'kept' });
    assert.deepEqual(kept.extra, [1, 2]);
    const result = await verifyPackage(run.bytes, { trusted: trustedOf(fx), now: new Date() });
    assert.equal(result.ok, true);
  });
});
