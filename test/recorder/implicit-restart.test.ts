/**
 * A session the recorder opened on the spot for a harness session, across recorder restarts: the
 * next recorder holds it as the one that opened it did, so the harness session's end (answered live,
 * or spooled while no recorder ran) seals it. And a log left ending with `session.end` but never
 * sealed does not wedge its project: the next event or close finishes the seal.
 * Real recorder processes, hooks over HTTP, the real shim's spool; oracles: each answer's status,
 * the session's state on disk, `tally verify` of the package, the session held next.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, type Project, runTally } from '../cli/tally-process.js';
import { packageRecords } from '../evidence/forge.js';
import { git } from '../session/fixture.js';
import { bashCall, claudeHook, postRaw, startThroughRecorder } from './post-raw.js';
import { readyRecorder } from './recorder-process.js';

interface Status {
  sessions: { session: string; root: string; implicit: boolean }[];
}

async function hook(p: Project, harness: string, event: string, fields: Record<string, unknown> = {}) {
  return postRaw(p, '/hooks/claude-code', claudeHook(p, harness, event, fields));
}

/** The recorder's status: the sessions it holds. */
async function held(p: Project): Promise<Status['sessions']> {
  return (jsonOut(await p.tally(['recorder', 'status', '--json'])) as unknown as Status).sessions;
}

async function stop(p: Project, child: ChildProcess): Promise<void> {
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  assert.equal((await postRaw(p, '/stop', '{}')).status, 200);
  assert.equal(await exited, 0);
}

function info(p: Project, session: string): { state: string; package?: string } {
  return JSON.parse(readFileSync(join(p.root, '.tally', 'sessions', session, 'session.json'), 'utf8'));
}

/** The session is closed on disk, its package holds `session.end` and passes `tally verify`. */
async function assertSealed(p: Project, session: string): Promise<void> {
  const closed = info(p, session);
  assert.equal(closed.state, 'closed', `session ${session} is sealed`);
  const pkg = String(closed.package);
  assert.ok(existsSync(pkg), pkg);
  assert.ok(packageRecords(readFileSync(pkg)).some((r) => r.event.type === 'session.end'));
  const verified = await p.tally(['verify', pkg]);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
}

/** A following hook of another harness session is answered 200 and recorded into a new session. */
async function recordsOn(p: Project, old: string): Promise<void> {
  const next = await hook(p, 'hb', 'PreToolUse', bashCall('call-next'));
  assert.equal(next.status, 200, next.body);
  const now = (await held(p)).find((s) => s.root === p.root);
  assert.ok(now && now.session !== old && now.implicit, JSON.stringify(now));
}

async function project(prefix: string): Promise<Project> {
  const p = makeProject(prefix);
  assert.equal((await p.tally(['init'])).code, 0);
  return p;
}

/** A session opened on the spot by harness session `ha`'s first hook, its recorder then stopped. */
async function openedThenStopped(p: Project): Promise<string> {
  const first = await readyRecorder(p);
  const pre = await hook(p, 'ha', 'PreToolUse', bashCall('call-1'));
  assert.equal(pre.status, 200, pre.body);
  const opened = (await held(p)).find((s) => s.root === p.root);
  assert.ok(opened?.implicit, JSON.stringify(opened));
  await stop(p, first);
  assert.equal(info(p, opened.session).state, 'open');
  return opened.session;
}

describe('a session opened for a harness session, across recorder restarts', () => {
  it("is held as opened for it by the next recorder: the harness session's end seals it", async () => {
    const p = await project('tally-implicit-restart-');
    const session = await openedThenStopped(p);

    const second = await readyRecorder(p);
    const end = await hook(p, 'ha', 'SessionEnd', { reason: 'other' });
    assert.equal(end.status, 200, end.body);
    await assertSealed(p, session);
    await stop(p, second);

    const third = await readyRecorder(p);
    await recordsOn(p, session);
    await stop(p, third);
  });

  it('is sealed by its SessionEnd spooled while no recorder ran, when the next recorder ingests it', async () => {
    const p = await project('tally-implicit-spool-');
    const session = await openedThenStopped(p);

    const shim = await runTally(['hook', 'claude-code'], {
      cwd: p.root,
      env: p.env,
      stdin: claudeHook(p, 'ha', 'SessionEnd', { reason: 'other' }),
    });
    assert.match(shim.stderr, /spooled/);
    const next = await readyRecorder(p);
    // Answered once the spool is ingested: the session it ended is no longer held.
    assert.deepEqual(await held(p), []);
    await assertSealed(p, session);
    await recordsOn(p, session);
    await stop(p, next);
  });
});

describe('a log that ends with session.end but was never sealed', () => {
  /** A session started by `tally session start` whose harness ended it (not opened for it: no seal). */
  async function endedUnsealed(p: Project): Promise<string> {
    const session = String(jsonOut(await p.tally(['session', 'start', '--json'])).session);
    const recorder = await readyRecorder(p);
    const end = await hook(p, 'ha', 'SessionEnd', { reason: 'other' });
    assert.equal(end.status, 200, end.body);
    await stop(p, recorder);
    assert.equal(info(p, session).state, 'open');
    const log = readFileSync(join(p.root, '.tally', 'sessions', session, 'events.log'), 'utf8');
    const last = JSON.parse(log.trim().split('\n').at(-1)!) as { payload: string };
    assert.match(Buffer.from(last.payload, 'base64').toString(), /"type":"session\.end"/);
    return session;
  }

  it("is sealed by the project's next event, which is recorded into a new session", async () => {
    const p = await project('tally-ended-event-');
    const session = await endedUnsealed(p);
    const recorder = await readyRecorder(p);
    await recordsOn(p, session);
    await assertSealed(p, session);
    await stop(p, recorder);
  });

  it("is left for its run's close when a run started it: an event that does not name it is refused", async () => {
    const p = await project('tally-ended-run-');
    const first = await readyRecorder(p);
    const session = await startThroughRecorder(p, {
      cwd: p.root,
      wiring: { harness: 'claude-code', harness_session: 'ha' },
    });
    const named = { 'x-tally-session': session };
    // The agent ends its run's session on its own hook channel, then has the recorder restarted.
    const end = await postRaw(
      p,
      '/hooks/claude-code',
      claudeHook(p, 'ha', 'SessionEnd', { reason: 'other' }),
      named,
    );
    assert.equal(end.status, 200, end.body);
    await stop(p, first);
    const second = await readyRecorder(p);
    // An event of another harness session (or one not naming the run's session) does not seal it.
    const stray = await hook(p, 'hb', 'PreToolUse', bashCall('call-stray'));
    assert.deepEqual([stray.status, JSON.parse(stray.body).error?.code], [409, 'ended'], stray.body);
    assert.equal(info(p, session).state, 'open');
    // The run's own close seals it.
    const closed = await postRaw(p, '/sessions/close', JSON.stringify({ session, cwd: p.root }));
    assert.equal(closed.status, 200, closed.body);
    await assertSealed(p, session);
    await recordsOn(p, session);
    await stop(p, second);
  });

  it('refuses an event naming it while an event beside it seals it, and records that one anew', async () => {
    const p = await project('tally-ended-race-');
    const session = await endedUnsealed(p);
    const recorder = await readyRecorder(p);
    const beside = hook(p, 'hb', 'PreToolUse', bashCall('call-beside'));
    await new Promise((r) => setTimeout(r, 5));
    // `tally session event` names the session: it was sealed meanwhile, so it is refused as such.
    const event = { id: 'evt_named', type: 'user.attention', time: new Date().toISOString() };
    const named = postRaw(
      p,
      '/ingest',
      JSON.stringify({
        source: 'cli',
        mode: 'observe',
        cwd: p.root,
        session,
        event: { ...event, source: 'urn:x' },
      }),
    );
    const [sealing, refused] = await Promise.all([beside, named]);
    assert.equal(sealing.status, 200, sealing.body);
    assert.equal(refused.status, 409, refused.body);
    assert.ok(['ended', 'already-closed'].includes(JSON.parse(refused.body).error?.code), refused.body);
    await assertSealed(p, session);
    await stop(p, recorder);
  });

  it('is sealed by a close through the recorder', async () => {
    const p = await project('tally-ended-close-');
    const session = await endedUnsealed(p);
    const recorder = await readyRecorder(p);
    const closed = await postRaw(p, '/sessions/close', JSON.stringify({ session, cwd: p.root }));
    assert.equal(closed.status, 200, closed.body);
    await assertSealed(p, session);
    await recordsOn(p, session);
    await stop(p, recorder);
  });
});

describe('an event recorded by a recorder that stopped before it answered, then spooled by its shim', () => {
  /**
   * The shim's hook of harness session `ha` under a fixed event id, from `cwd` (the project's top
   * unless named): delivered, or spooled when no recorder runs.
   */
  const shim = (p: Project, id: string, event: string, fields: Record<string, unknown>, cwd = p.root) =>
    runTally(['hook', 'claude-code', '--event-id', id], {
      cwd,
      env: p.env,
      stdin: JSON.stringify({ ...JSON.parse(claudeHook(p, 'ha', event, fields)), cwd }),
    });

  const sessions = (p: Project, root = p.root) =>
    readdirSync(join(root, '.tally', 'sessions'))
      .filter((name) => name.startsWith('ses_'))
      .sort();

  /** How many times event `id` is recorded, over every session's log of the project at `root`. */
  const recordedTimes = (p: Project, id: string, root = p.root) =>
    sessions(p, root)
      .flatMap((session) =>
        readFileSync(join(root, '.tally', 'sessions', session, 'events.log'), 'utf8').split('\n'),
      )
      .filter((line) => line.replace(/\0/g, '').trim() !== '')
      .filter(
        (line) => JSON.parse(Buffer.from(JSON.parse(line).payload, 'base64').toString()).event.id === id,
      ).length;

  /** Every spooled line's `received_at` put `ms` back: as if the recorder had been down that long. */
  const ageSpool = (p: Project, ms: number) => {
    const file = join(p.home, 'spool', 'claude-code.jsonl');
    const at = new Date(Date.now() - ms).toISOString();
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(
      file,
      lines
        .map((l) => (l.trim() === '' ? l : JSON.stringify({ ...JSON.parse(l), received_at: at })))
        .join('\n'),
    );
  };

  /** The package's records whose event id is `id`. */
  const recordsOf = (p: Project, session: string, id: string) =>
    packageRecords(readFileSync(String(info(p, session).package))).filter((r) => r.event.id === id);

  it('that ended its log: the session is sealed with it once, and no session is opened for it again', async () => {
    const p = await project('tally-spooled-end-');
    const session = String(jsonOut(await p.tally(['session', 'start', '--json'])).session);
    const first = await readyRecorder(p);
    const live = await shim(p, 'evt_end_once', 'SessionEnd', { reason: 'other' });
    assert.equal(live.code, 0, live.stderr);
    assert.doesNotMatch(live.stderr, /spooled/);
    await stop(p, first);
    // The shim that lost the answer spools the same payload under the same id.
    const spooled = await shim(p, 'evt_end_once', 'SessionEnd', { reason: 'other' });
    assert.match(spooled.stderr, /spooled/);

    const next = await readyRecorder(p);
    assert.deepEqual(await held(p), []);
    await assertSealed(p, session);
    assert.deepEqual(sessions(p), [session]);
    assert.equal(recordsOf(p, session, 'evt_end_once').length, 1);
    await stop(p, next);
  });

  it('in a session sealed since: not recorded again in a new session', async () => {
    const p = await project('tally-spooled-sealed-');
    const session = String(jsonOut(await p.tally(['session', 'start', '--json'])).session);
    const first = await readyRecorder(p);
    const live = await shim(p, 'evt_call_once', 'PreToolUse', bashCall('call-once'));
    assert.equal(live.code, 0, live.stderr);
    assert.doesNotMatch(live.stderr, /spooled/);
    const closed = await postRaw(p, '/sessions/close', JSON.stringify({ session, cwd: p.root }));
    assert.equal(closed.status, 200, closed.body);
    await stop(p, first);
    const spooled = await shim(p, 'evt_call_once', 'PreToolUse', bashCall('call-once'));
    assert.match(spooled.stderr, /spooled/);
    // Beside it, a line no recorder ever recorded.
    const fresh = await shim(p, 'evt_call_new', 'PreToolUse', bashCall('call-new'));
    assert.match(fresh.stderr, /spooled/);

    const next = await readyRecorder(p);
    const opened = (await held(p)).map((s) => s.session);
    assert.equal(opened.length, 1);
    assert.deepEqual(sessions(p), [session, opened[0]!].sort());
    const sealed = await postRaw(p, '/sessions/close', JSON.stringify({ session: opened[0], cwd: p.root }));
    assert.equal(sealed.status, 200, sealed.body);
    assert.deepEqual(
      [recordsOf(p, session, 'evt_call_once').length, recordsOf(p, session, 'evt_call_new').length],
      [1, 0],
    );
    assert.deepEqual(
      [recordsOf(p, opened[0]!, 'evt_call_once').length, recordsOf(p, opened[0]!, 'evt_call_new').length],
      [0, 1],
    );
    await stop(p, next);
  });

  it('from a file an ingest left aside, spooled an hour before: what that ingest recorded is not recorded again', async () => {
    const p = await project('tally-spooled-aside-');
    assert.match((await shim(p, 'evt_aside_1', 'PreToolUse', bashCall('call-aside'))).stderr, /spooled/);
    assert.match((await shim(p, 'evt_aside_2', 'SessionEnd', { reason: 'other' })).stderr, /spooled/);
    ageSpool(p, 60 * 60_000);
    // A shim killed while it wrote its line left it without its end: the ingest records the lines
    // before it and leaves the file aside, whole, for the next start.
    appendFileSync(join(p.home, 'spool', 'claude-code.jsonl'), '{"id":"evt_cut","received_at":"');
    const first = await readyRecorder(p);
    await stop(p, first);
    assert.ok(readdirSync(join(p.home, 'spool')).some((f) => f.includes('.ingesting-')));
    const opened = sessions(p);
    assert.deepEqual([opened.length, info(p, opened[0]!).state], [1, 'closed']);

    const next = await readyRecorder(p);
    await stop(p, next);
    assert.deepEqual(
      [sessions(p), recordedTimes(p, 'evt_aside_1'), recordedTimes(p, 'evt_aside_2')],
      [opened, 1, 1],
    );
  });

  it('recorded in the session of an enclosing project its harness session went on in: not recorded again in its own', async () => {
    const p = await project('tally-spooled-enclosing-');
    // A repository of its own, with a project of its own.
    const inner = join(p.root, 'sub', 'b');
    mkdirSync(inner, { recursive: true });
    writeFileSync(join(inner, 'b.txt'), 'b\n');
    git(inner, 'init', '-q');
    git(inner, 'add', '.');
    git(inner, 'commit', '-qm', 'b');
    assert.equal((await p.tally(['init'], { cwd: inner })).code, 0);
    const first = await readyRecorder(p);
    const opening = await shim(p, 'evt_outer_0', 'PreToolUse', bashCall('call-0'));
    assert.doesNotMatch(opening.stderr, /spooled/);
    // Harness session ha goes on in the inner project: its events join ha's session, the outer one.
    const live = await shim(p, 'evt_inner_1', 'PreToolUse', bashCall('call-1'), inner);
    assert.doesNotMatch(live.stderr, /spooled/);
    await stop(p, first);
    assert.match((await shim(p, 'evt_inner_1', 'PreToolUse', bashCall('call-1'), inner)).stderr, /spooled/);

    const next = await readyRecorder(p);
    await stop(p, next);
    // The line was ingested (none is left for a next start), and into no session.
    assert.deepEqual(readdirSync(join(p.home, 'spool')), []);
    assert.deepEqual(
      [
        recordedTimes(p, 'evt_inner_1'),
        existsSync(join(inner, '.tally', 'sessions')) ? sessions(p, inner) : [],
      ],
      [1, []],
    );
  });
});
