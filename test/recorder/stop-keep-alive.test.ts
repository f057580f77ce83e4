/**
 * A hook that reaches the recorder on a keep-alive connection while it stops. A stop takes no new
 * connection, but a connection busy when the stop begins stays open until the closes under way are
 * done, and a client may send more requests on it meanwhile. The stop is held open by a close the
 * test controls (a witness hub that holds the close's last head); the connection is kept busy across
 * the stop by a request whose head is sent before the stop and its body after.
 * Oracles: each answer's status, the session log on disk, the next recorder, and `tally verify`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, type Project } from '../cli/tally-process.js';
import { holdingHub } from './holding-hub.js';
import { bashCall, claudeHook, postRaw, startThroughRecorder } from './post-raw.js';
import { readyRecorder } from './recorder-process.js';

interface Answer {
  status: number;
  body: string;
}

/** One HTTP/1.1 connection to the recorder on 127.0.0.1, its requests sent one after another. */
async function keepAlive(p: Project): Promise<{
  socket: Socket;
  request: (path: string, body: string) => Buffer;
  answer: () => Promise<Answer>;
  ended: Promise<void>;
}> {
  const { port } = JSON.parse(readFileSync(join(p.home, 'recorder.json'), 'utf8')) as { port: number };
  const secret = readFileSync(join(p.home, 'run', 'recorder.secret'), 'utf8').trim();
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((ready, failed) => {
    socket.once('connect', ready);
    socket.once('error', failed);
  });
  let received = Buffer.alloc(0);
  const waiting: ((answer: Answer) => void)[] = [];
  const take = () => {
    for (;;) {
      const head = received.indexOf('\r\n\r\n');
      if (head < 0 || waiting.length === 0) return;
      const text = received.subarray(0, head).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0);
      if (received.length < head + 4 + length) return;
      const body = received.subarray(head + 4, head + 4 + length).toString('utf8');
      received = received.subarray(head + 4 + length);
      waiting.shift()!({ status: Number(text.split(' ')[1]), body });
    }
  };
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    take();
  });
  const ended = new Promise<void>((done) => socket.once('close', () => done()));
  socket.on('error', () => undefined);
  return {
    socket,
    request: (path, body) =>
      Buffer.concat([
        Buffer.from(
          `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n` +
            `authorization: Bearer ${secret}\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\n\r\n`,
        ),
        Buffer.from(body),
      ]),
    answer: () =>
      new Promise<Answer>((resolve, reject) => {
        waiting.push(resolve);
        socket.once('close', () => reject(new Error('the recorder closed the connection unanswered')));
        take();
      }),
    ended,
  };
}

/** The event of each record of a session log or package: type and call id. */
function events(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const { payload } = JSON.parse(line) as { payload?: string };
      const { event } = JSON.parse(Buffer.from(payload ?? 'e30=', 'base64').toString()) as {
        event?: { type: string; call?: { id: string } };
      };
      if (event === undefined) return 'not a record';
      return event.call ? `${event.type} ${event.call.id}` : event.type;
    });
}

describe('a hook on a keep-alive connection while the recorder stops', () => {
  it('is refused, nothing recorded: the session it would end stays open without a session.end, and the next recorder records into it and seals it', async () => {
    const p = makeProject('tally-stop-keepalive-');
    assert.equal((await p.tally(['init'])).code, 0);
    const other = makeProject('tally-stop-keepalive-other-');
    other.env.TALLY_HOME = p.env.TALLY_HOME; // one user, one recorder, two repositories
    assert.equal((await other.tally(['init'])).code, 0);
    const hub = await holdingHub();
    try {
      const child = await readyRecorder(p);
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      // The close that holds the stop open: a session of the other repository, witnessed.
      const sealing = await startThroughRecorder(p, { cwd: other.root, witness: { hub: hub.url } });
      // This repository's session is opened on the spot by its agent's first hook.
      const conn = await keepAlive(p);
      conn.socket.write(
        conn.request('/hooks/claude-code', claudeHook(p, 'ha', 'PreToolUse', bashCall('call-1'))),
      );
      const first = await conn.answer();
      assert.equal(first.status, 200, first.body);
      const status = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
        sessions: { session: string; root: string; implicit: boolean }[];
      };
      const held = status.sessions.find((s) => s.root === p.root);
      assert.ok(held?.implicit, JSON.stringify(status));
      const log = join(p.root, '.tally', 'sessions', held.session, 'events.log');

      const closing = postRaw(p, '/sessions/close', JSON.stringify({ session: sealing }));
      await hub.held;
      const end = conn.request('/hooks/claude-code', claudeHook(p, 'ha', 'SessionEnd', { reason: 'other' }));
      conn.socket.write(end.subarray(0, end.length - 8));
      const stopped = await postRaw(p, '/stop', '{}');
      assert.equal(stopped.status, 200, stopped.body);
      conn.socket.write(end.subarray(end.length - 8));
      const ended = await conn.answer();
      assert.equal(ended.status, 409, `the SessionEnd after the stop: ${ended.body}`);
      assert.equal((JSON.parse(ended.body) as { error: { code: string } }).error.code, 'stopping');
      // Another harness session of the same repository, on the same connection.
      conn.socket.write(
        conn.request('/hooks/claude-code', claudeHook(p, 'hb', 'PreToolUse', bashCall('call-2'))),
      );
      const next = await conn.answer();
      assert.equal(next.status, 409, `a hook after the stop: ${next.body}`);

      hub.release();
      const closed = await closing;
      assert.equal(closed.status, 200, closed.body);
      assert.equal(await exited, 0);
      await conn.ended; // the stop ended the connection rather than waiting on it
      assert.deepEqual(events(log), ['session.start', 'tool.before call-1']);
      const info = JSON.parse(
        readFileSync(join(p.root, '.tally', 'sessions', held.session, 'session.json'), 'utf8'),
      ) as { state: string };
      assert.equal(info.state, 'open');

      // The next recorder resumes the session: it records into it, and it seals.
      const again = await readyRecorder(p);
      const againExited = new Promise<number | null>((done) => again.once('exit', (code) => done(code)));
      const resumed = await postRaw(
        p,
        '/hooks/claude-code',
        claudeHook(p, 'hc', 'PreToolUse', bashCall('call-3')),
      );
      assert.equal(resumed.status, 200, resumed.body);
      const sealed = jsonOut(await p.tally(['session', 'close', '--session', held.session, '--json']));
      const pkg = String(sealed.package);
      assert.deepEqual(
        events(pkg).filter((e) => e.startsWith('tool.') || e.startsWith('session.')),
        ['session.start', 'tool.before call-1', 'tool.before call-3', 'session.end'],
      );
      const verified = await p.tally(['verify', pkg]);
      assert.equal(verified.code, 0, verified.stdout + verified.stderr);
      assert.equal((await postRaw(p, '/stop', '{}')).status, 200);
      assert.equal(await againExited, 0);
    } finally {
      await hub.close();
    }
  });
});
