/**
 * A recorder whose write to a session log fails (a full disk) — a real write error from the
 * kernel: the recorder runs under a file size limit (`ulimit -f`; Node.js ignores SIGXFSZ), so the
 * one event too large for it fails as a write on a full disk does, and the small ones after it fit
 * again, as they do once space returns. Oracles: the HTTP status each request got, the log read
 * back from the package, the head file and `tally verify`.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { makeProject, type Project, TALLY_BIN } from '../cli/tally-process.js';
import { postRaw } from './post-raw.js';
import { readyRecorder } from './recorder-process.js';

/** `tally recorder run` in a process that cannot make a file longer than 1024 blocks. */
function limitedRecorder(p: Project): Promise<ChildProcess> {
  return readyRecorder(p, {
    program: 'sh',
    argv: ['-c', 'ulimit -f 1024 && exec "$0" "$1" recorder run --ready', process.execPath, TALLY_BIN],
  });
}

function post(
  p: Project,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return postRaw(p, path, JSON.stringify(body), headers);
}

describe('a recorder whose log write fails', () => {
  it('answers the failed event with an error, records again once writes fit, and seals what it acknowledged', async () => {
    const p = makeProject('tally-write-failed-');
    assert.equal((await p.tally(['init'])).code, 0);
    const recorder = await limitedRecorder(p);
    const started = await post(p, '/sessions', { cwd: p.root });
    assert.equal(started.status, 200, started.body);
    const session = (JSON.parse(started.body) as { session: string }).session;
    const event = (id: string, command: string) =>
      post(
        p,
        '/hooks/claude-code',
        {
          session_id: 'harness-1',
          cwd: p.root,
          hook_event_name: 'PostToolUse',
          tool_name: 'Bash',
          tool_input: { command },
          tool_use_id: id,
          tool_response: { stdout: 'ok' },
        },
        { 'x-tally-session': session, 'x-tally-event-id': id },
      );
    const acked: string[] = [];
    for (const id of ['evt_before1', 'evt_before2']) {
      const answer = await event(id, `echo ${id}`);
      assert.equal(answer.status, 200, answer.body);
      acked.push(id);
    }
    // Past the limit: the write fails, and the request is told so.
    const failed = await event('evt_toolarge', `echo ${'x'.repeat(2 * 1024 * 1024)}`);
    assert.notEqual(failed.status, 200);
    assert.match(failed.body, /write-failed/);
    // Writes that fit succeed again, in the same recorder.
    for (const id of ['evt_after1', 'evt_after2']) {
      const answer = await event(id, `echo ${id}`);
      assert.equal(answer.status, 200, answer.body);
      acked.push(id);
    }
    const closed = await post(p, '/sessions/close', { session });
    assert.equal(closed.status, 200, closed.body);
    const pkg = (JSON.parse(closed.body) as { package: string }).package;
    const ids = readFileSync(pkg, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(1, -1)
      .map(
        (l) =>
          (
            JSON.parse(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString()) as {
              event: { id: string };
            }
          ).event.id,
      );
    for (const id of acked) assert.ok(ids.includes(id), `${id} was acknowledged and is not in the package`);
    assert.ok(!ids.includes('evt_toolarge'));
    const verified = await p.tally(['verify', pkg]);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    const exited = new Promise((done) => recorder.once('exit', done));
    assert.equal((await post(p, '/stop', {})).status, 200);
    await exited;
  });

  it('closed right after the failed write, seals the log up to the last durable record (no record is claimed cut)', async () => {
    const p = makeProject('tally-write-failed-');
    assert.equal((await p.tally(['init'])).code, 0);
    const recorder = await limitedRecorder(p);
    const started = await post(p, '/sessions', { cwd: p.root });
    const session = (JSON.parse(started.body) as { session: string }).session;
    const failed = await post(
      p,
      '/hooks/claude-code',
      {
        session_id: 'harness-1',
        cwd: p.root,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: `echo ${'x'.repeat(2 * 1024 * 1024)}` },
        tool_use_id: 'call-1',
        tool_response: { stdout: 'ok' },
      },
      { 'x-tally-session': session },
    );
    assert.match(failed.body, /write-failed/);
    // The record that failed was never durable: the close is not refused as a log cut short, and
    // the head file is not told of it (a later open would be refused too).
    const closed = await post(p, '/sessions/close', { session });
    assert.equal(closed.status, 200, closed.body);
    const verified = await p.tally(['verify', (JSON.parse(closed.body) as { package: string }).package]);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    const exited = new Promise((done) => recorder.once('exit', done));
    assert.equal((await post(p, '/stop', {})).status, 200);
    await exited;
  });
});
