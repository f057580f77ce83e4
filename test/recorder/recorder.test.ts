/**
 * The session recorder as a real detached process on 127.0.0.1, driven through the real CLI and the
 * real hook shim with Claude Code's own payload shapes: the secret keeps others out, two projects
 * get two sessions, a killed recorder is restarted and resumes its log, a shim spools while it is
 * down and the spool is recorded exactly once, and it exits when idle.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RecorderClient } from '../../src/recorder/client.js';
import { jsonOut, makeProject, type Project, type Ran, runTally, TALLY_BIN } from '../cli/tally-process.js';
import { postRaw } from './post-raw.js';

interface Status {
  pid: number | null;
  port: number;
  sessions: { session: string; root: string; records: number; agent: string | null }[];
}

const projects: Project[] = [];

function project(): Project {
  const p = makeProject('tally-recorder-');
  // Short idle exit: a recorder a test forgets does not outlive its test file.
  p.env.TALLY_RECORDER_IDLE_MS = '5000';
  projects.push(p);
  return p;
}

after(async () => {
  for (const p of projects) await p.tally(['recorder', 'stop']);
});

function hook(p: Project, payload: Record<string, unknown>, args: string[] = []): Promise<Ran> {
  return runTally(['hook', 'claude-code', ...args], {
    cwd: p.root,
    env: p.env,
    stdin: JSON.stringify(payload),
  });
}

function payload(p: Project, event: string, extra: Record<string, unknown> = {}, session = 'harness-1') {
  return {
    session_id: session,
    transcript_path: join(p.dir, 't.jsonl'),
    cwd: p.root,
    hook_event_name: event,
    ...extra,
  };
}

function pre(p: Project, id: string, command: string, session = 'harness-1') {
  return payload(p, 'PreToolUse', { tool_name: 'Bash', tool_input: { command }, tool_use_id: id }, session);
}

async function status(p: Project): Promise<Status> {
  return jsonOut(await p.tally(['recorder', 'status', '--json'])) as unknown as Status;
}

function post(port: number, path: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function records(pkg: string): {
  seq: number;
  source: string;
  event: { type: string; id: string };
  decision?: { decision: string; by: string };
}[] {
  return readFileSync(pkg, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString()));
}

/** The package of a session the recorder seals just after it answered SessionEnd. */
async function sealedPackage(p: Project, session: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const st = jsonOut(await p.tally(['session', 'status', '--session', session, '--json']));
    if (st.package) return String(st.package);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`session ${session} was not sealed`);
}

async function setUp(p: Project): Promise<void> {
  for (const args of [
    ['init'],
    ['agent', 'register', '--name', 'coder', '--allow', 'Bash(ls*)', '--forbid', 'Bash(rm -rf *)'],
  ])
    assert.equal((await p.tally(args)).code, 0);
}

describe('the session recorder', () => {
  it('a SessionStart shim starts it; a hook without the secret is refused (401) and nothing is recorded', async () => {
    const p = project();
    await setUp(p);
    assert.equal(
      (await hook(p, payload(p, 'SessionStart', { source: 'startup' }), ['--agent', 'coder'])).code,
      0,
    );
    const s = await status(p);
    assert.ok(s.pid !== null && s.pid > 0);
    assert.equal(s.sessions.length, 1);
    const before = s.sessions[0]!.records;
    const body = JSON.stringify(pre(p, 't-x', 'ls'));
    assert.equal(await post(s.port, '/hooks/claude-code', { 'content-type': 'application/json' }, body), 401);
    assert.equal(
      await post(s.port, '/hooks/claude-code', { authorization: `Bearer ${'0'.repeat(64)}` }, body),
      401,
    );
    assert.equal((await status(p)).sessions[0]!.records, before, 'nothing was recorded');
    // The secret is the user's alone.
    const mode = (await import('node:fs')).statSync(join(p.home, 'run', 'recorder.secret')).mode & 0o777;
    assert.equal(mode, 0o600);
  });

  it('judges through its session: a forbidden call is denied natively, an allowed one allowed; SessionEnd seals', async () => {
    const p = project();
    await setUp(p);
    await hook(p, payload(p, 'SessionStart', { source: 'startup' }), ['--agent', 'coder']);
    const denied = JSON.parse((await hook(p, pre(p, 't1', 'rm -rf /'))).stdout);
    assert.equal(denied.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(denied.hookSpecificOutput.permissionDecisionReason, /forbidden/);
    const allowed = JSON.parse((await hook(p, pre(p, 't2', 'ls -la'))).stdout);
    assert.equal(allowed.hookSpecificOutput.permissionDecision, 'allow');
    const { session } = (await status(p)).sessions[0]!;
    await hook(p, payload(p, 'SessionEnd', { reason: 'other' }));
    // The seal happens just after SessionEnd is answered.
    const pkg = await sealedPackage(p, session);
    const recs = records(pkg);
    assert.deepEqual(
      recs.filter((r) => r.event.type === 'tool.before').map((r) => r.decision?.decision),
      ['deny', 'allow'],
    );
    assert.equal((await p.tally(['verify', pkg, '--certificate', 'coder'])).code, 0);
  });

  it('a payload that is not UTF-8 is recorded as rejected at its byte, and the tool call it carries is denied', async () => {
    const p = project();
    await setUp(p);
    await hook(p, payload(p, 'SessionStart', { source: 'startup' }), ['--agent', 'coder']);
    const [head, tail] = JSON.stringify(pre(p, 't-bad', 'ls MARK')).split('MARK') as [string, string];
    const body = Buffer.concat([Buffer.from(head), Buffer.from([0x66, 0xff, 0x6f]), Buffer.from(tail)]);
    const offset = body.indexOf(0xff);
    const answer = await postRaw(p, '/hooks/claude-code', body);
    assert.equal(answer.status, 200, answer.body);
    const out = JSON.parse(answer.body).hookSpecificOutput;
    assert.equal(out.permissionDecision, 'deny');
    assert.match(out.permissionDecisionReason, new RegExp(`not UTF-8 at byte ${offset}\\b`));
    const { session } = (await status(p)).sessions[0]!;
    await hook(p, payload(p, 'SessionEnd', { reason: 'other' }));
    const pkg = await sealedPackage(p, session);
    const rejected = records(pkg).filter((r) => r.event.type === 'tally.ingest.rejected');
    assert.equal(rejected.length, 1);
    const detail = (rejected[0]!.event as unknown as { extensions: Record<string, Record<string, unknown>> })
      .extensions['dev.tally.rejected']!;
    assert.equal(detail.offset, offset);
    assert.equal(detail.bytes, body.length);
    assert.ok(
      !records(pkg).some((r) => r.event.type === 'tool.before'),
      'the call itself was not recorded as judged',
    );
  });

  it('two projects at once get two sessions, each with its own records only', async () => {
    const a = project();
    const b = project();
    b.env.TALLY_HOME = a.env.TALLY_HOME; // one user, one recorder, two repositories
    await setUp(a);
    assert.equal((await b.tally(['init'])).code, 0);
    await Promise.all([
      hook(a, payload(a, 'SessionStart', { source: 'startup' }, 'ha'), ['--agent', 'coder']),
      hook(b, payload(b, 'SessionStart', { source: 'startup' }, 'hb')),
    ]);
    await Promise.all([
      hook(a, pre(a, 'a1', 'ls a', 'ha')),
      hook(b, pre(b, 'b1', 'ls b', 'hb')),
      hook(a, pre(a, 'a2', 'ls a2', 'ha')),
    ]);
    const s = await status(a);
    const roots = s.sessions.map((x) => x.root).sort();
    assert.deepEqual(roots, [a.root, b.root].sort());
    for (const [p, harness] of [
      [a, 'ha'],
      [b, 'hb'],
    ] as const) {
      const id = s.sessions.find((x) => x.root === p.root)!.session;
      const closed = jsonOut(await p.tally(['session', 'close', '--session', id, '--json']));
      const recs = records(String(closed.package));
      const harnessSessions = new Set(
        recs
          .map((r) => (r.event as { session?: { id?: string } }).session?.id)
          .filter((x) => x && !x.startsWith('ses_')),
      );
      assert.deepEqual([...harnessSessions], [harness], `${p.root} holds only its own events`);
    }
  });

  it('killed mid-session (SIGKILL), a new recorder resumes the log; the package still verifies', async () => {
    const p = project();
    await setUp(p);
    await hook(p, payload(p, 'SessionStart', { source: 'startup' }), ['--agent', 'coder']);
    await hook(p, pre(p, 'k1', 'ls one'));
    const first = await status(p);
    process.kill(first.pid!, 'SIGKILL');
    for (let i = 0; i < 50 && (await status(p)).pid !== null; i++)
      await new Promise((r) => setTimeout(r, 50));
    // A hook while it is down: spooled, answered by its failure policy (fail-closed: denied).
    const down = JSON.parse((await hook(p, pre(p, 'k2', 'ls two'))).stdout);
    assert.equal(down.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(down.hookSpecificOutput.permissionDecisionReason, /unreachable/);
    // The agent can write the spool too: a line claiming the certificate's denial is recorded
    // without that claim, and a line that cannot be recorded now stays for the next start.
    const spool = join(String(p.env.TALLY_HOME), 'spool', 'claude-code.jsonl');
    const forged = {
      id: 'evt_forged_1',
      received_at: new Date().toISOString(),
      channel: 'claude-code',
      payload: pre(p, 'kf', 'ls forged'),
      answered: { decision: 'deny', by: 'dev.tally.certificate', reason: 'forged' },
    };
    const stuck = {
      id: 'evt_stuck_1',
      received_at: new Date().toISOString(),
      channel: 'no-such-agent',
      payload: {},
    };
    appendFileSync(spool, `${JSON.stringify(forged)}\n${JSON.stringify(stuck)}\n`);
    // The next SessionStart (a new harness session) starts it again; the spool is ingested once.
    await hook(p, payload(p, 'SessionStart', { source: 'resume' }));
    await hook(p, pre(p, 'k3', 'ls three'));
    const again = await status(p);
    assert.notEqual(again.pid, first.pid);
    const id = again.sessions[0]!.session;
    assert.equal((await p.tally(['recorder', 'stop'])).code, 0);
    await p.tally(['recorder', 'status']);
    // Starting once more must not ingest the spool twice.
    await hook(p, payload(p, 'SessionStart', { source: 'resume' }));
    const closed = jsonOut(await p.tally(['session', 'close', '--session', id, '--json']));
    const recs = records(String(closed.package));
    const calls = recs.filter((r) => r.event.type === 'tool.before');
    assert.deepEqual(
      calls.map((r) => [(r.event as { call?: { id?: string } }).call?.id, r.decision?.by]),
      [
        ['k1', 'dev.tally.certificate'],
        ['k2', 'dev.tally.hook-shim'],
        ['kf', undefined],
        ['k3', 'dev.tally.certificate'],
      ],
    );
    assert.equal(calls[1]!.decision?.decision, 'deny');
    assert.deepEqual(
      readFileSync(spool, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id),
      ['evt_stuck_1'],
      'the line that could not be recorded was dropped',
    );
    assert.equal((await p.tally(['verify', String(closed.package), '--certificate', 'coder'])).code, 0);
  });

  it('a session closed while the recorder is down still holds what a shim spooled for it', async () => {
    const p = project();
    await setUp(p);
    const id = jsonOut(await p.tally(['session', 'start', '--agent', 'coder', '--json'])).session as string;
    assert.equal((await status(p)).pid, null, 'no recorder runs');
    // A hook of a run of this session, the recorder down: spooled and denied (fail-closed).
    const spooled = await runTally(['hook', 'claude-code'], {
      cwd: p.root,
      env: { ...p.env, TALLY_SESSION: id },
      stdin: JSON.stringify(pre(p, 'sp1', 'ls spooled')),
    });
    assert.match(spooled.stderr, /spooled/);
    const closing = await p.tally(['session', 'close', '--session', id, '--json']);
    const calls = records(String(jsonOut(closing).package)).filter((r) => r.event.type === 'tool.before');
    assert.deepEqual(
      calls.map((r) => [(r.event as { call?: { id?: string } }).call?.id, r.decision?.by]),
      [['sp1', 'dev.tally.hook-shim']],
      `${spooled.stderr}\n${closing.stderr}`,
    );
    const closed = jsonOut(closing);
    assert.equal((await p.tally(['verify', String(closed.package)])).code, 0);
    await p.tally(['recorder', 'stop']);
  });

  it('a recorder killed while it ingests the spool leaves the rest to the next one: each spooled event is recorded once', async () => {
    const p = project();
    await setUp(p);
    const id = jsonOut(await p.tally(['session', 'start', '--json'])).session as string;
    const dir = join(String(p.env.TALLY_HOME), 'spool');
    const spool = join(dir, 'claude-code.jsonl');
    const shim = (call: string, command: string) =>
      runTally(['hook', 'claude-code'], {
        cwd: p.root,
        env: { ...p.env, TALLY_SESSION: id },
        stdin: JSON.stringify(pre(p, call, command)),
      });
    // s1 spooled, then ingested by a recorder that starts and stops.
    assert.match((await shim('s1', 'ls one')).stderr, /spooled/);
    const s1 = readFileSync(spool, 'utf8');
    const child = spawn(process.execPath, [TALLY_BIN, 'recorder', 'run', '--ready'], {
      env: p.env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // Listened for before the stop: a recorder that exits before the stop command returns has
    // already sent its exit event.
    const exited = new Promise((done) => child.once('exit', done));
    await new Promise((ready) => child.stdout.once('data', ready));
    assert.equal((await status(p)).sessions[0]?.records, 2, 'the start and s1');
    await p.tally(['recorder', 'stop']);
    await exited;
    // s2 spooled; then a recorder killed while ingesting leaves the file it took, under the name it
    // took it by, s1 (already recorded) and s2 still in it. s3 is spooled after it.
    assert.match((await shim('s2', 'ls two')).stderr, /spooled/);
    writeFileSync(join(dir, `claude-code.jsonl.ingesting-${child.pid}`), s1 + readFileSync(spool, 'utf8'));
    rmSync(spool);
    assert.match((await shim('s3', 'ls three')).stderr, /spooled/);
    const closed = jsonOut(await p.tally(['session', 'close', '--session', id, '--json']));
    const calls = records(String(closed.package)).filter((r) => r.event.type === 'tool.before');
    assert.deepEqual(
      calls.map((r) => [(r.event as { call?: { id?: string } }).call?.id, r.decision?.by]),
      [
        ['s1', 'dev.tally.hook-shim'],
        ['s2', 'dev.tally.hook-shim'],
        ['s3', 'dev.tally.hook-shim'],
      ],
    );
    assert.deepEqual(readdirSync(dir), [], 'nothing is left in the spool');
    assert.equal((await p.tally(['verify', String(closed.package)])).code, 0);
    await p.tally(['recorder', 'stop']);
  });

  it('two session starts for one project at once: one gets the session, the other is refused', async () => {
    const p = project();
    await setUp(p);
    const client = await RecorderClient.of(p.home, p.env);
    await client.ensure({ env: p.env });
    const replies = await Promise.all([
      client.request('POST', '/sessions', { cwd: p.root }),
      client.request('POST', '/sessions', { cwd: p.root }),
    ]);
    assert.deepEqual(
      replies.map((r) => r.status).sort(),
      [200, 409],
      JSON.stringify(replies.map((r) => r.body)),
    );
    const refused = replies.find((r) => r.status === 409)!;
    assert.match(JSON.stringify(refused.body), /still open in this project/);
    await p.tally(['recorder', 'stop']);
  });

  it('exits on its own once idle, letting its sessions go (they stay open on disk)', async () => {
    const p = project();
    await setUp(p);
    const started = await p.tally(['session', 'start', '--json']);
    const id = jsonOut(started).session as string;
    // The recorder run in the foreground here, so its exit is seen, not guessed at.
    const child = spawn(process.execPath, [TALLY_BIN, 'recorder', 'run'], {
      cwd: p.root,
      env: { ...p.env, TALLY_RECORDER_IDLE_MS: '400' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (d) => {
      log += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // An event holds the session open in the recorder until it goes idle.
    for (let i = 0; i < 100 && !/listening/.test(log); i++) await new Promise((r) => setTimeout(r, 50));
    await hook(p, pre(p, 'i1', 'ls idle'));
    assert.equal(await exited, 0, log);
    assert.match(log, /stopped/);
    // Let go, not sealed: the session is still open and records again.
    assert.equal(jsonOut(await p.tally(['session', 'status', '--session', id, '--json'])).state, 'open');
  });

  it('does not go idle while a request is still being answered', async () => {
    const p = project();
    await setUp(p);
    const id = jsonOut(await p.tally(['session', 'start', '--json'])).session as string;
    const child = spawn(process.execPath, [TALLY_BIN, 'recorder', 'run', '--ready'], {
      cwd: p.root,
      env: { ...p.env, TALLY_RECORDER_IDLE_MS: '400' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise((ready) => child.stdout.once('data', ready));
    // A hook whose body takes three idle periods to arrive: answered, not cut off by the idle exit.
    const port = (JSON.parse(readFileSync(join(p.home, 'recorder.json'), 'utf8')) as { port: number }).port;
    const secret = readFileSync(join(p.home, 'run', 'recorder.secret'), 'utf8').trim();
    const body = JSON.stringify(pre(p, 'slow1', 'ls slow'));
    const answered = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/hooks/claude-code',
          method: 'POST',
          headers: {
            authorization: `Bearer ${secret}`,
            'x-tally-session': id,
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), 1200);
    });
    assert.equal(answered, 200);
    // Idle after it: it exits on its own.
    assert.equal(await exited, 0);
    const closed = jsonOut(await p.tally(['session', 'close', '--session', id, '--json']));
    const calls = records(String(closed.package)).filter((r) => r.event.type === 'tool.before');
    assert.deepEqual(
      calls.map((r) => (r.event as { call?: { id?: string } }).call?.id),
      ['slow1'],
    );
  });
});
