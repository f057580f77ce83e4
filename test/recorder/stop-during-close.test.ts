/**
 * `tally recorder stop` (POST /stop) arriving while the recorder seals a session. The close is held
 * at a point the test controls — the last chain head it sends to a witness hub the test runs, which
 * answers only once the stop has been answered — so the stop lands inside the close every time.
 * Oracles: the close's HTTP answer, the recorder's exit, the package read back and `tally verify`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { holdingHub } from './holding-hub.js';
import { postRaw, startThroughRecorder } from './post-raw.js';
import { readyRecorder } from './recorder-process.js';

describe('the recorder stopped while it seals a session', () => {
  it('finishes the close and answers it before it exits; a close asked afterwards finds it sealed', async () => {
    const p = makeProject('tally-stop-close-');
    assert.equal((await p.tally(['init'])).code, 0);
    const hub = await holdingHub();
    try {
      const child = await readyRecorder(p);
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      const session = await startThroughRecorder(p, { cwd: p.root, witness: { hub: hub.url } });
      const acked = await postRaw(
        p,
        '/hooks/claude-code',
        JSON.stringify({
          session_id: 'harness-1',
          cwd: p.root,
          hook_event_name: 'PreToolUse',
          tool_name: 'Bash',
          tool_input: { command: 'ls' },
          tool_use_id: 'call-1',
        }),
        { 'x-tally-session': session },
      );
      assert.equal(acked.status, 200, acked.body);
      const closing = postRaw(p, '/sessions/close', JSON.stringify({ session }));
      await hub.held; // the close is under way: sealed, its last head not yet taken by the hub
      const stopped = await postRaw(p, '/stop', '{}');
      assert.equal(stopped.status, 200, stopped.body);
      hub.release();
      const closed = await closing;
      assert.equal(closed.status, 200, closed.body);
      const pkg = (JSON.parse(closed.body) as { package: string }).package;
      assert.equal(await exited, 0);
      const ids = readFileSync(pkg, 'utf8')
        .split('\n')
        .filter(Boolean)
        .slice(1, -1)
        .map(
          (l) =>
            (
              JSON.parse(
                Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString(),
              ) as {
                event: { type: string; call?: { id: string } };
              }
            ).event,
        );
      assert.ok(ids.some((e) => e.type === 'tool.before' && e.call?.id === 'call-1'));
      assert.equal(ids.at(-1)?.type, 'session.end');
      const verified = await p.tally(['verify', pkg]);
      assert.equal(verified.code, 0, verified.stdout + verified.stderr);
      const status = jsonOut(await p.tally(['session', 'status', '--session', session, '--json']));
      assert.equal(status.package, pkg);
      const again = await p.tally(['session', 'close', '--session', session]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /already closed/);
    } finally {
      await hub.close();
    }
  });
});
