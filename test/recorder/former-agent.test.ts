/**
 * A harness session keeps the certificate that judged it. The person starts a session under an
 * agent's certificate (`tally session start --agent coder`) with hooks installed without one; the
 * agent, which can read the recorder's secret, asks the recorder to close that session while it
 * runs. Before the fix its next events opened a session on the spot with no certificate, and a call
 * the certificate forbids was answered with no denial; nor may they join a session the agent opens
 * itself meanwhile. Oracle: the certificate's own forbid pattern — the call must be denied before
 * and after the close it forged.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodedPayloads, runTally } from '../cli/tally-process.js';
import { logContent } from '../log-content.js';
import { certified, recorderProjects } from './projects.js';

const project = recorderProjects();

const DENY = /"permissionDecision":"deny"/;

async function waitGone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A project whose person's session runs under coder, its first forbidden call denied, then closed by the agent. */
async function closedByTheAgent() {
  const p = await project('tally-former-agent-', [
    ...certified('--allow', 'Write(src/**)', '--forbid', 'Write(protected/**)'),
    ['session', 'start', '--agent', 'coder'],
  ]);
  const state = join(p.root, '.tally');
  const first = readFileSync(join(state, 'sessions', 'current'), 'utf8').trim();
  const hook = async (payload: Record<string, unknown>, harness = 'harness-1') => {
    const fields = { session_id: harness, cwd: p.root, transcript_path: join(p.dir, 'none.jsonl') };
    const ran = await runTally(['hook', 'claude-code'], {
      cwd: p.root,
      env: p.env,
      stdin: JSON.stringify({ ...fields, ...payload }),
    });
    assert.equal(ran.code, 0, ran.stderr);
    return ran.stdout;
  };
  const forbidden = (id: string) =>
    hook({
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: join(p.root, 'protected/a.txt'), content: 'x' },
      tool_use_id: id,
    });
  await hook({ hook_event_name: 'SessionStart', source: 'startup' });
  assert.match(await forbidden('toolu_1'), DENY);
  // The agent's close, with the secret it can read.
  const home = String(p.env.TALLY_HOME);
  const { port } = JSON.parse(readFileSync(join(home, 'recorder.json'), 'utf8')) as { port: number };
  const secret = readFileSync(join(home, 'run', 'recorder.secret'), 'utf8').trim();
  const closed = await fetch(`http://127.0.0.1:${port}/sessions/close`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ session: first, cwd: p.root }),
  });
  assert.equal(closed.status, 200, await closed.text());
  return { p, state, first, hook, forbidden };
}

describe('a harness session keeps the certificate that judged it', () => {
  it('a close the agent forged does not let its next forbidden call go unjudged', async () => {
    const { p, state, first, forbidden } = await closedByTheAgent();
    assert.match(await forbidden('toolu_2'), DENY);
    // The session the harness session's next events opened binds coder's certificate too.
    const status = JSON.parse((await p.tally(['recorder', 'status', '--json'])).stdout) as {
      sessions: { session: string }[];
    };
    const next = status.sessions.map((s) => s.session).find((s) => s !== first);
    assert.ok(next, 'no session was opened for the later events');
    const info = JSON.parse(readFileSync(join(state, 'sessions', next, 'session.json'), 'utf8'));
    assert.equal(info.agent?.name, 'coder');
  });

  it('nor does a session with no certificate the agent opens itself before it', async () => {
    for (const how of ['an event of its own', 'tally session start'] as const) {
      const { p, hook, forbidden } = await closedByTheAgent();
      if (how === 'tally session start') assert.equal((await p.tally(['session', 'start'])).code, 0);
      else await hook({ hook_event_name: 'UserPromptSubmit', prompt: 'hi' }, 'agent-own');
      assert.match(await forbidden('toolu_2'), DENY, how);
    }
  });

  it('nor does a recorder started again after the agent killed the one that judged it', async () => {
    const { p, state, first, hook, forbidden } = await closedByTheAgent();
    const { pid } = JSON.parse((await p.tally(['recorder', 'status', '--json'])).stdout) as { pid: number };
    process.kill(pid, 'SIGKILL');
    await waitGone(pid);
    // The agent's own SessionStart starts a recorder that never held the session: what judged it
    // is read from the project.
    await hook({ hook_event_name: 'SessionStart', source: 'resume' });
    assert.match(await forbidden('toolu_2'), DENY);
    const { sessions } = JSON.parse((await p.tally(['recorder', 'status', '--json'])).stdout) as {
      sessions: { session: string }[];
    };
    const next = sessions.map((s) => s.session).find((s) => s !== first);
    assert.ok(next, 'no session was opened for the later events');
    const info = JSON.parse(readFileSync(join(state, 'sessions', next, 'session.json'), 'utf8'));
    assert.equal(info.agent?.name, 'coder');
    // Denied by the certificate in that session, not by a shim that found no recorder.
    assert.match(decodedPayloads(logContent(join(state, 'sessions', next, 'events.log'))), /toolu_2/);
  });
});
