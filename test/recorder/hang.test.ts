/**
 * One agent's project cannot stop the recorder that serves every session. The agent writes its
 * project (`.git/` included) and names its own transcript, so it can put a FIFO where git reads its
 * config or where the recorder reads the transcript, or name `/dev/zero`. Oracle: the kernel's own
 * behaviour (a FIFO opened for reading waits for a writer; `/dev/zero` never ends) and git's (it
 * opens `.git/config` to find a repository's top level): without the fix the recorder's event loop
 * blocks in either, and no other session's hook is answered. With it, the other session is answered
 * while the first waits, the first gets an error (its shim's fail-closed deny) once git's deadline
 * passes, and a SessionEnd whose transcript is a FIFO or a device seals, saying what it could not read.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonOut, makeProject, type Project, type Ran, runTally } from '../cli/tally-process.js';
import { git } from '../session/fixture.js';

/** Git's deadline in these tests: long beside answering a hook, short beside a test run. */
const GIT_TIMEOUT_MS = 6000;

const projects: Project[] = [];
const fifos: string[] = [];

/** A FIFO at `path`: whoever opens it for reading waits until someone opens it for writing. */
function fifo(path: string): string {
  rmSync(path, { force: true });
  execFileSync('mkfifo', [path]);
  fifos.push(path);
  return path;
}

function recorderPid(p: Project): number | null {
  try {
    return (JSON.parse(readFileSync(join(p.home, 'run', 'recorder.pid'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

after(async () => {
  // A recorder that did hang (the test failed) is killed, and whatever still waits on a FIFO is let go.
  for (const p of projects) {
    const pid = recorderPid(p);
    if (pid !== null)
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
  }
  // A git still waiting on a FIFO (the recorder killed, or no deadline) would outlive the test.
  for (const p of projects)
    for (const pid of gitsIn(p.dir, true))
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
  for (const path of fifos)
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {}
});

function project(): Project {
  const p = makeProject('tally-hang-');
  p.env.TALLY_RECORDER_IDLE_MS = '20000';
  p.env.TALLY_GIT_TIMEOUT_MS = String(GIT_TIMEOUT_MS);
  projects.push(p);
  return p;
}

async function setUp(p: Project): Promise<void> {
  for (const args of [['init'], ['agent', 'register', '--name', 'coder', '--allow', 'Bash(ls*)']])
    assert.equal((await p.tally(args)).code, 0);
}

function hook(p: Project, cwd: string, payload: Record<string, unknown>, args: string[] = []): Promise<Ran> {
  return runTally(['hook', 'claude-code', ...args], { cwd, env: p.env, stdin: JSON.stringify(payload) });
}

function pre(cwd: string, harness: string, id: string, transcript: string): Record<string, unknown> {
  return {
    session_id: harness,
    transcript_path: transcript,
    cwd,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
    tool_use_id: id,
  };
}

/** The pids of git processes running in `dir` (or under it), as the kernel says. */
function gitsIn(dir: string, under = false): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (argv[0]?.endsWith('git') && (cwd === dir || (under && cwd.startsWith(`${dir}/`))))
        out.push(Number(name));
    } catch {}
  }
  return out;
}

async function until(what: string, test: () => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (test()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`waited 30 s for ${what}`);
}

/** A second repository beside the project, whose `.git/config` is a FIFO. */
function stalledRepository(p: Project): string {
  const other = join(p.dir, 'other');
  mkdirSync(other);
  git(other, 'init', '-q');
  git(other, 'commit', '-q', '--allow-empty', '-m', 'start');
  fifo(join(other, '.git', 'config'));
  return other;
}

/** The package of a session, which must be sealed. */
async function sealed(p: Project, session: string): Promise<string> {
  const st = jsonOut(await p.tally(['session', 'status', '--session', session, '--json']));
  assert.equal(typeof st.package, 'string', 'the session was sealed');
  return String(st.package);
}

/** The first record of a package whose event is of `type`, decoded. */
// biome-ignore lint/suspicious/noExplicitAny: a decoded record, read by the assertions that follow
function recordOf(pkg: string, type: string): any {
  return readFileSync(pkg, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from(JSON.parse(l).payload, 'base64').toString()))
    .find((r) => r.event.type === type);
}

/** Settles with its value or with 'pending' when it has not settled yet. */
async function peek<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);
}

describe('the recorder does not wait on what an agent controls', () => {
  it("a FIFO at one project's .git/config: another session is answered meanwhile; the first is refused when git's deadline passes", async () => {
    const p = project();
    await setUp(p);
    const transcript = join(p.dir, 't.jsonl');
    const start = {
      session_id: 'harness-a',
      transcript_path: transcript,
      cwd: p.root,
      hook_event_name: 'SessionStart',
      source: 'startup',
    };
    assert.equal((await hook(p, p.root, start, ['--agent', 'coder'])).code, 0);
    const other = stalledRepository(p);
    // A new harness session in the stalled repository: the recorder asks git for its top level.
    const stalled = hook(p, other, pre(other, 'harness-b', 't-b', join(p.dir, 'tb.jsonl')));
    await until('git to be asked about the stalled repository', () => gitsIn(other).length > 0);
    const answered = await hook(p, p.root, pre(p.root, 'harness-a', 't-a', transcript));
    assert.equal(answered.code, 0);
    assert.equal(JSON.parse(answered.stdout).hookSpecificOutput.permissionDecision, 'allow', answered.stderr);
    const status = jsonOut(await p.tally(['recorder', 'status', '--json']));
    assert.ok(typeof status.pid === 'number', 'the recorder answers its status');
    assert.equal(await peek(stalled), 'pending', 'the other session was answered while git still waited');
    // The stalled session's own hook: refused when git's deadline passed, so its shim denies (fail closed).
    const refused = await stalled;
    assert.equal(refused.code, 0);
    assert.equal(JSON.parse(refused.stdout).hookSpecificOutput.permissionDecision, 'deny');
    assert.match(refused.stderr, /answered 409: .*git rev-parse .*did not finish within 6000 ms/);
    await until('the git that waited to be stopped', () => gitsIn(other).length === 0);
  });

  it('a FIFO and /dev/zero as the transcript: SessionEnd is answered and the session sealed, naming what was not read', async () => {
    const p = project();
    await setUp(p);
    const pipe = fifo(join(p.dir, 'transcript.jsonl'));
    const start = {
      session_id: 'harness-t',
      transcript_path: pipe,
      cwd: p.root,
      hook_event_name: 'SessionStart',
      source: 'startup',
    };
    assert.equal((await hook(p, p.root, start, ['--agent', 'coder'])).code, 0);
    const { sessions } = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
      sessions: { session: string }[];
    };
    const session = sessions[0]!.session;
    assert.equal((await hook(p, p.root, pre(p.root, 'harness-t', 't-1', '/dev/zero'))).code, 0);
    const end = {
      session_id: 'harness-t',
      transcript_path: pipe,
      cwd: p.root,
      hook_event_name: 'SessionEnd',
      reason: 'other',
    };
    const ended = await hook(p, p.root, end);
    assert.equal(ended.code, 0, ended.stderr);
    assert.doesNotMatch(ended.stderr, /spooled/, 'SessionEnd was answered by the recorder');
    const pkg = await sealed(p, session);
    assert.equal((await p.tally(['verify', pkg])).code, 0);
    const summary = recordOf(pkg, 'tally.transcript.summary');
    const transcripts = summary.event.extensions['dev.tally.transcript'].transcripts as {
      path: string;
      files: number;
      unread?: { file: string; reason: string }[];
    }[];
    const byPath = new Map(transcripts.map((t) => [t.path, t]));
    assert.equal(byPath.get(pipe)?.files, 0);
    assert.match(byPath.get(pipe)?.unread?.[0]?.reason ?? '', /is a FIFO, not a regular file/);
    assert.match(
      byPath.get('/dev/zero')?.unread?.[0]?.reason ?? '',
      /is a character device, not a regular file/,
    );
  });

  it("a spool naming a repository whose git does not answer: one wait, that repository's other lines kept untried, the rest ingested", async () => {
    const p = project();
    await setUp(p);
    const other = stalledRepository(p);
    mkdirSync(join(other, 'sub'));
    const line = (id: string, cwd: string, harness: string, agent?: string) =>
      JSON.stringify({
        id,
        received_at: new Date().toISOString(),
        channel: 'claude-code',
        ...(agent ? { agent } : {}),
        payload: pre(cwd, harness, `t-${id}`, join(p.dir, `${id}.jsonl`)),
      });
    mkdirSync(join(p.home, 'spool'), { recursive: true });
    writeFileSync(
      join(p.home, 'spool', 'claude-code.jsonl'),
      `${[
        line('s1', other, 'harness-s'),
        line('s2', join(other, 'sub'), 'harness-s2'),
        line('s3', other, 'harness-s3'),
        line('q1', p.root, 'harness-q', 'coder'),
      ].join('\n')}\n`,
    );
    // The recorder starts (a SessionStart shim), ingests the spool, then answers.
    const start = {
      session_id: 'harness-a',
      transcript_path: join(p.dir, 't.jsonl'),
      cwd: p.root,
      hook_event_name: 'SessionStart',
      source: 'startup',
    };
    const started = await hook(p, p.root, start, ['--agent', 'coder']);
    assert.doesNotMatch(started.stderr, /spooled/, started.stderr);
    const log = readFileSync(join(p.home, 'run', 'recorder.log'), 'utf8').split('\n');
    const waited = log.filter((l) => /could not be ingested.*: git rev-parse/.test(l));
    const untried = log.filter((l) => /could not be ingested.*: not tried, git in /.test(l));
    assert.equal(waited.length, 1, log.join('\n'));
    assert.equal(untried.length, 2, log.join('\n'));
    const kept = readFileSync(join(p.home, 'spool', 'claude-code.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).id);
    assert.deepEqual(
      kept,
      ['s1', 's2', 's3'],
      'the stalled lines are kept for the next start; the other was ingested',
    );
  });

  it('a FIFO at .git/config at close: SessionEnd is answered, the session sealed, and the receipt says why the tree was not compared', async () => {
    const p = project();
    await setUp(p);
    const transcript = join(p.dir, 't.jsonl');
    const base = { session_id: 'harness-c', transcript_path: transcript, cwd: p.root };
    assert.equal(
      (
        await hook(p, p.root, { ...base, hook_event_name: 'SessionStart', source: 'startup' }, [
          '--agent',
          'coder',
        ])
      ).code,
      0,
    );
    const { sessions } = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
      sessions: { session: string }[];
    };
    const session = sessions[0]!.session;
    fifo(join(p.root, '.git', 'config'));
    const ended = await hook(p, p.root, { ...base, hook_event_name: 'SessionEnd', reason: 'other' });
    assert.doesNotMatch(ended.stderr, /spooled/, 'SessionEnd was answered by the recorder');
    const summary = recordOf(await sealed(p, session), 'tally.reconcile.summary');
    // The reconciliation's own refusal (src/capture/reconcile): git is not run on that directory.
    const error = summary.event.extensions['dev.tally.reconcile'].error as { code: string; message: string };
    assert.ok(['git-state', 'timeout'].includes(error.code), JSON.stringify(error));
    assert.match(error.message, /config/);
  });
});
