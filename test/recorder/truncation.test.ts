/**
 * The recorder keeps the chain head of a session it holds in memory. Oracle, from the security
 * requirements: the head is kept outside the log — in a signed head file under the Tally home and in
 * the recorder's memory — and sealing a log shorter than its head fails with `truncated-log`. Here
 * the agent cuts the live log back and puts back a head file it copied earlier (no key needed for
 * either): only the recorder's memory still knows better, and the close through it is refused.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonOut, makeProject, type Project, runTally } from '../cli/tally-process.js';

const projects: Project[] = [];
after(async () => {
  for (const p of projects) await p.tally(['recorder', 'stop']);
});

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

describe('the recorder holds the chain head', () => {
  it('a log cut back under a restored older head file is refused at close, naming the missing records', async () => {
    const p = makeProject('tally-rec-trunc-');
    p.env.TALLY_RECORDER_IDLE_MS = '5000';
    projects.push(p);
    assert.equal((await p.tally(['init'])).code, 0);
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
