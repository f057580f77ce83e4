/**
 * A Claude Code session resumed across two Tally sessions (`claude --resume`, or one long Claude
 * session that outlives a close): its transcript is one file holding both sessions' calls, and the
 * second close must not record the first session's calls again as seen only in the transcript.
 * Oracle: call toolu_one ran in session 1, was reported by its hooks and is in session 1's package.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, type Project, runTally } from '../cli/tally-process.js';
import { certified, recorderProjects } from './projects.js';

const project = recorderProjects();

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const use = (id: string, file: string, time: string) =>
  line({
    type: 'assistant',
    timestamp: time,
    message: {
      content: [{ type: 'tool_use', id, name: 'Write', input: { file_path: file, content: 'x\n' } }],
    },
  });
const result = (id: string, time: string) =>
  line({
    type: 'user',
    timestamp: time,
    message: { content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] },
  });

function hook(p: Project, payload: Record<string, unknown>, args: string[] = []) {
  return runTally(['hook', 'claude-code', ...args], {
    cwd: p.root,
    env: p.env,
    stdin: JSON.stringify(payload),
  });
}

// biome-ignore lint/suspicious/noExplicitAny: decoded records
function records(pkg: string): any[] {
  return readFileSync(pkg, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from(JSON.parse(l).payload, 'base64').toString()));
}

/** One Tally session of harness session h1: start (or resume), one Write reported by its hooks, end. */
async function session(p: Project, transcript: string, call: string, source: string): Promise<string> {
  const fields = { session_id: 'h1', transcript_path: transcript, cwd: p.root };
  const file = join(p.root, `${call}.txt`);
  const now = new Date().toISOString();
  appendFileSync(transcript, use(call, file, now));
  assert.equal(
    (await hook(p, { ...fields, hook_event_name: 'SessionStart', source }, ['--agent', 'coder'])).code,
    0,
  );
  const { sessions } = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
    sessions: { session: string }[];
  };
  const tool = { tool_name: 'Write', tool_input: { file_path: file, content: 'x\n' }, tool_use_id: call };
  assert.equal((await hook(p, { ...fields, ...tool, hook_event_name: 'PreToolUse' })).code, 0);
  writeFileSync(file, 'x\n');
  appendFileSync(transcript, result(call, new Date().toISOString()));
  assert.equal(
    (await hook(p, { ...fields, ...tool, hook_event_name: 'PostToolUse', tool_response: {} })).code,
    0,
  );
  assert.equal((await hook(p, { ...fields, hook_event_name: 'SessionEnd', reason: 'other' })).code, 0);
  const st = jsonOut(await p.tally(['session', 'status', '--session', sessions[0]!.session, '--json']));
  assert.equal(typeof st.package, 'string', 'the session was sealed');
  return String(st.package);
}

describe('a resumed Claude Code session', () => {
  it("the second session's package does not hold the first session's call as seen only in the transcript", async () => {
    const p = await project('tally-resume-', certified('--allow', 'Write'));
    const transcript = join(p.dir, 'h1.jsonl');
    writeFileSync(transcript, '');
    const first = await session(p, transcript, 'toolu_one', 'startup');
    assert.ok(records(first).some((r) => r.source === 'hook' && r.event.call?.id === 'toolu_one'));
    const second = await session(p, transcript, 'toolu_two', 'resume');
    const again = records(second).filter(
      (r) => r.source === 'transcript' && r.event.call?.id === 'toolu_one',
    );
    assert.deepEqual(
      again.map((r) => [r.event.type, r.event.extensions['dev.tally.transcript'].seen_only_in_transcript]),
      [],
      "session 1's call is in session 2's package, as a call no hook reported",
    );
  });
});
