/**
 * The recorder keeps the chain head of a session it holds in memory. Oracle, from the security
 * requirements: the head is kept outside the log — in a signed head file under the Tally home and in
 * the recorder's memory — and sealing a log shorter than its head fails with `truncated-log`. Here
 * the agent cuts the live log back and puts back a head file it copied earlier (no key needed for
 * either): only the recorder's memory still knows better, and the close through it is refused.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, truncateSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, type Project, runTally } from '../cli/tally-process.js';
import { recorderProjects } from './projects.js';

const project = recorderProjects();

function hook(p: Project, payload: Record<string, unknown>) {
  return runTally(['hook', 'claude-code'], { cwd: p.root, env: p.env, stdin: JSON.stringify(payload) });
}

function payload(p: Project, event: string, extra: Record<string, unknown> = {}) {
  return {
    session_id: 'harness-1',
    transcript_path: join(p.dir, 't.jsonl'),
    cwd: p.root,
    hook_event_name: event,
    ...extra,
  };
}

/** The seq of a log line or head slot's envelope (its payload read without checking it). */
function seqOf(line: string): number {
  const envelope = JSON.parse(line) as { payload: string };
  return (JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as { seq: number }).seq;
}

/** Posts a hook over a raw connection and SIGKILLs the recorder at the first byte of its answer. */
function killAtAnswer(p: Project, body: string): Promise<string> {
  const { port } = JSON.parse(readFileSync(join(p.home, 'recorder.json'), 'utf8')) as { port: number };
  const secret = readFileSync(join(p.home, 'run', 'recorder.secret'), 'utf8').trim();
  const { pid } = JSON.parse(readFileSync(join(p.home, 'run', 'recorder.pid'), 'utf8')) as { pid: number };
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `POST /hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
    socket.once('data', (chunk) => {
      process.kill(pid, 'SIGKILL');
      socket.destroy();
      resolve(chunk.toString('utf8'));
    });
    socket.on('error', reject);
  });
}

describe('the recorder holds the chain head', () => {
  it('names a record in the head file before its answer leaves: a recorder killed at the answer leaves no record the head does not cover', async () => {
    const p = await project('tally-rec-headfirst-', [['init']], 5000);
    for (let attempt = 0; attempt < 8; attempt++) {
      // A SessionStart through the shim (re)starts the recorder, which resumes the session's log.
      assert.equal((await hook(p, payload(p, 'SessionStart', { source: 'startup' }))).code, 0);
      const status = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
        sessions: { session: string }[];
      };
      const id = status.sessions[0]!.session;
      const pre = payload(p, 'PreToolUse', {
        tool_name: 'Bash',
        tool_input: { command: `ls ${attempt}` },
        tool_use_id: `k${attempt}`,
      });
      const answer = await killAtAnswer(p, JSON.stringify(pre));
      assert.match(answer, /^HTTP\/1\.1 200/, 'the hook was answered');
      const log = readFileSync(join(p.root, '.tally', 'sessions', id, 'events.log'), 'utf8');
      const lines = log.replace(/\0+$/, '').trimEnd().split('\n');
      const last = lines[lines.length - 1]!;
      assert.match(
        Buffer.from(JSON.parse(last).payload, 'base64').toString('utf8'),
        new RegExp(`"k${attempt}"`),
      );
      const slots = readFileSync(join(p.home, 'heads', `${id}.head.json`), 'utf8')
        .split(/[\n\u0000]+/)
        .filter((line) => line.startsWith('{'));
      const head = Math.max(...slots.map(seqOf));
      assert.equal(head, seqOf(last), `attempt ${attempt}: the head names the answered record`);
    }
  });

  it('a log cut back under a restored older head file is refused at close, naming the missing records', async () => {
    const p = await project('tally-rec-trunc-', [['init']], 5000);
    assert.equal((await hook(p, payload(p, 'SessionStart', { source: 'startup' }))).code, 0);
    const status = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
      sessions: { session: string }[];
    };
    const id = status.sessions[0]!.session;
    const log = join(p.root, '.tally', 'sessions', id, 'events.log');
    const head = join(p.home, 'heads', `${id}.head.json`);
    assert.ok(existsSync(head), 'the head file is under the Tally home');
    const linesAt = () => readFileSync(log).toString().split('\n').length - 1;
    const kept = linesAt();
    const early = join(p.dir, 'early.head.json');
    copyFileSync(head, early);
    for (const [n, command] of ['ls', 'ls -la', 'pwd'].entries()) {
      const pre = payload(p, 'PreToolUse', {
        tool_name: 'Bash',
        tool_input: { command },
        tool_use_id: `t${n}`,
      });
      assert.equal((await hook(p, pre)).code, 0);
    }
    const total = linesAt();
    assert.ok(total > kept);
    const bytes = readFileSync(log);
    let end = 0;
    for (let i = 0; i < kept; i++) end = bytes.indexOf(0x0a, end) + 1;
    truncateSync(log, end);
    copyFileSync(early, head);
    const closed = await p.tally(['session', 'close', '--session', id]);
    assert.notEqual(closed.code, 0, 'the cut log is not sealed');
    assert.match(closed.stderr, new RegExp(`records ${kept}–${total - 1} were removed`));
    assert.ok(!existsSync(join(p.root, '.tally', 'packages', `${id}.tally`)), 'no package was written');
    // What the recorder knew is now in the head file: a later close without it is refused too.
    const again = await p.tally(['session', 'close', '--session', id]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, new RegExp(`records ${kept}–${total - 1} were removed`));
  });
});
