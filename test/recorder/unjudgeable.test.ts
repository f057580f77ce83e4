/**
 * Hook payloads the recorder cannot judge, through its real process: each is answered with the
 * agent's own deny and recorded in its session as rejected. The payloads are Cursor's documented
 * `beforeShellExecution` shape (`conversation_id, generation_id, workspace_roots, command, cwd`; no
 * `session_id`): one whose command carries a lone surrogate — JSON that JavaScript reads but
 * Tally's strict reader refuses, and that the model can put in any tool argument — and one with an
 * empty command, which the adapter refuses.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type Project, runTally } from '../cli/tally-process.js';
import { logContent } from '../log-content.js';
import { postRaw } from './post-raw.js';
import { recorderProjects } from './projects.js';

const project = recorderProjects();

function cursorPayload(p: Project, event: string, extra: Record<string, unknown>) {
  return {
    conversation_id: 'conv-1',
    generation_id: 'gen-1',
    hook_event_name: event,
    workspace_roots: [p.root],
    ...extra,
  };
}

function postHook(p: Project, body: string): Promise<{ status: number; body: string }> {
  return postRaw(p, '/hooks/cursor', body);
}

/** The session's records, decoded. */
function recorded(p: Project): string[] {
  const sessions = join(p.root, '.tally', 'sessions');
  const ids = readdirSync(sessions).filter((d) => d.startsWith('ses_'));
  assert.equal(ids.length, 1, JSON.stringify(ids));
  return logContent(join(sessions, ids[0]!, 'events.log'))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString());
}

describe('a Cursor payload the recorder cannot judge', () => {
  it('is denied in Cursor’s answer and recorded as rejected: strict JSON refused, and a bad field', async () => {
    const p = await project('tally-unjudgeable-', [['init']], 5000);
    const started = await runTally(['hook', 'cursor'], {
      cwd: p.root,
      env: p.env,
      stdin: JSON.stringify(cursorPayload(p, 'beforeSubmitPrompt', { prompt: 'go' })),
    });
    assert.equal(started.code, 0, started.stderr);

    const shell = JSON.stringify(
      cursorPayload(p, 'beforeShellExecution', { command: 'rm -rf src LONE', cwd: p.root }),
    ).replace('LONE', '\\ud800');
    const lone = await postHook(p, shell);
    assert.equal(lone.status, 200, lone.body);
    const answer = JSON.parse(lone.body) as Record<string, string>;
    assert.equal(answer.permission, 'deny');
    assert.match(String(answer.agent_message), /could not judge.*lone surrogate/);

    const empty = await postHook(
      p,
      JSON.stringify(cursorPayload(p, 'beforeShellExecution', { command: '', cwd: p.root })),
    );
    assert.equal(empty.status, 200, empty.body);
    assert.equal((JSON.parse(empty.body) as Record<string, string>).permission, 'deny');

    const rejected = recorded(p).filter((r) => r.includes('"tally.ingest.rejected"'));
    assert.equal(rejected.length, 2, rejected.join('\n'));
    assert.match(rejected[0]!, /lone surrogate/);
    assert.match(rejected[1]!, /\/command/);
  });
});
