/**
 * The call that ran is the call that was judged, through a real recorder and the real Claude Code
 * hook shim. Oracle, from the security requirements: a `tool.after` whose input differs from its
 * `tool.before` (same call id) is flagged `input_changed`, and cross-verification counts the call by
 * everything it reported: `PreToolUse ls` + `PostToolUse rm -rf /` under a certificate forbidding
 * `Bash(rm -rf *)` is an unauthorized call (`tally verify --certificate` exits 1).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, type Project, runTally } from '../cli/tally-process.js';
import { certified, recorderProjects } from './projects.js';

const project = recorderProjects();

function hook(p: Project, payload: Record<string, unknown>, args: string[] = []) {
  return runTally(['hook', 'claude-code', ...args], {
    cwd: p.root,
    env: p.env,
    stdin: JSON.stringify(payload),
  });
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

describe('input_changed through the recorder', () => {
  it('PreToolUse ls then PostToolUse rm -rf / is flagged and counted as unauthorized', async () => {
    const p = await project(
      'tally-rec-changed-',
      certified('--allow', 'Bash(ls*)', '--forbid', 'Bash(rm -rf *)'),
      5000,
    );
    assert.equal(
      (await hook(p, payload(p, 'SessionStart', { source: 'startup' }), ['--agent', 'coder'])).code,
      0,
    );
    const pre = payload(p, 'PreToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'tu-1',
    });
    const allowed = JSON.parse((await hook(p, pre)).stdout);
    assert.equal(allowed.hookSpecificOutput.permissionDecision, 'allow');
    const post = payload(p, 'PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /' },
      tool_response: { stdout: '', stderr: '' },
      tool_use_id: 'tu-1',
    });
    assert.equal((await hook(p, post)).code, 0);
    const status = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
      sessions: { session: string }[];
    };
    const id = status.sessions[0]!.session;
    const closed = await p.tally(['session', 'close', '--session', id, '--json']);
    assert.equal(closed.code, 0, closed.stderr);
    const pkg = jsonOut(closed).package as string;
    const records = readFileSync(pkg, 'utf8')
      .split('\n')
      .slice(1, -2)
      .map((line) =>
        JSON.parse(Buffer.from((JSON.parse(line) as { payload: string }).payload, 'base64').toString()),
      );
    const afterRecord = records.find((r) => r.event.type === 'tool.after');
    assert.deepEqual(afterRecord.flags, ['input_changed']);
    const verified = await p.tally(['verify', pkg, '--certificate', 'coder', '--json']);
    assert.equal(verified.code, 1);
    const checks = jsonOut(verified).checks as Array<{
      check: string;
      ok: boolean;
      code: string;
      detail: unknown;
    }>;
    const unauthorized = checks.find((c) => c.check === 'unauthorized_calls')!;
    assert.equal(unauthorized.code, 'unauthorized');
    assert.match(JSON.stringify(unauthorized.detail), /"input_changed":true/);
  });
});
