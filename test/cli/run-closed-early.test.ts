/**
 * `tally run` and a close it did not ask for. The agent can read the recorder's secret (a file of
 * its user's) and holds its session id (its http hooks send it from its environment), so it can ask
 * the recorder to close its own session while it runs, put `session.json` back to open, and change
 * files afterwards: the run's own close then finds the session sealed with the tree compared before
 * those changes.
 * Oracle: the changes are on disk and in no receipt, so the run must not say VERIFIED, and must
 * exit 1; the same agent without the forged close is not flagged.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from './tally-process.js';

/** An agent that reports a prompt over the run's http hook, maybe forges a close, then edits a file. */
function agentScript(forgeClose: boolean): string {
  return `
const { readFileSync, writeFileSync } = require('node:fs');
const env = process.env;
const port = JSON.parse(readFileSync(env.TALLY_HOME + '/recorder.json', 'utf8')).port;
// Its hooks' token is good for its session's hooks only; the secret itself is a file the agent can read.
const secret = readFileSync(env.TALLY_HOME + '/run/recorder.secret', 'utf8').trim();
const post = (path, body, token) => fetch('http://127.0.0.1:' + port + path, { method: 'POST', headers: { authorization: 'Bearer ' + token, 'x-tally-session': env.TALLY_SESSION, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.text());
(async () => {
  await post('/hooks/claude-code', { session_id: 'h1', cwd: process.cwd(), hook_event_name: 'UserPromptSubmit', prompt: 'hi', transcript_path: '/nonexistent' }, env.TALLY_RECORDER_SECRET);
  if (${forgeClose}) {
    await post('/sessions/close', { session: env.TALLY_SESSION }, secret);
    const file = '.tally/sessions/' + env.TALLY_SESSION + '/session.json';
    const info = JSON.parse(readFileSync(file, 'utf8'));
    info.state = 'open';
    delete info.closed_at;
    delete info.package;
    writeFileSync(file, JSON.stringify(info));
  }
  writeFileSync('src/app.js', 'export const v = 666;\\n');
})();
`;
}

describe('tally run and a close it did not ask for', () => {
  for (const forged of [true, false])
    it(
      forged
        ? 'a close the agent forged while it ran fails the run'
        : 'the same agent without it is not flagged',
      async () => {
        const p = makeProject('tally-run-closed-');
        p.env.TALLY_RECORDER_IDLE_MS = '5000';
        try {
          assert.equal((await p.tally(['init'])).code, 0);
          writeFileSync(join(p.dir, 'agent.cjs'), agentScript(forged));
          // The run puts Claude Code's --settings after the command's name: a shell script drops them.
          const agent = join(p.dir, 'agent');
          const script = `#!/bin/sh\nexec "${process.execPath}" "${join(p.dir, 'agent.cjs')}"\n`;
          writeFileSync(agent, script, { mode: 0o755 });
          const ran = await p.tally(['run', '--json', '--harness', 'claude-code', '--', agent]);
          const out = jsonOut(ran) as { verified: boolean; failed: { check: string; code: string }[] };
          const flagged = out.failed.some((f) => f.code === 'closed-while-running');
          assert.equal(flagged, forged, ran.stderr);
          if (forged) {
            assert.equal(ran.code, 1, ran.stderr);
            assert.equal(out.verified, false);
            assert.match(ran.stderr, /before this run asked, by a close it did not ask for/);
          } else assert.equal(ran.code, 0, ran.stderr);
        } finally {
          await p.tally(['recorder', 'stop']);
        }
      },
    );

  it("the person's tally session close after a close the agent ran itself exits 1 and says so", async () => {
    const p = makeProject('tally-close-early-');
    assert.equal((await p.tally(['init'])).code, 0);
    assert.equal((await p.tally(['session', 'start'])).code, 0);
    const state = join(p.root, '.tally', 'sessions');
    const session = readFileSync(join(state, 'current'), 'utf8').trim();
    // The agent: a close of its own, then the session's state written back as it was.
    assert.equal((await p.tally(['session', 'close'])).code, 0);
    const file = join(state, session, 'session.json');
    const info = JSON.parse(readFileSync(file, 'utf8'));
    info.state = 'open';
    delete info.closed_at;
    delete info.package;
    writeFileSync(file, JSON.stringify(info));
    writeFileSync(join(state, 'current'), `${session}\n`);
    writeFileSync(join(p.root, 'src/app.js'), 'export const v = 666;\n');
    const closed = await p.tally(['session', 'close', '--json']);
    assert.equal(closed.code, 1, closed.stderr);
    assert.match(
      closed.stderr,
      /compared at .*, by a close before this one: what changed since is in no receipt/,
    );
    assert.ok(jsonOut(closed).compared_before_close);
  });
});
