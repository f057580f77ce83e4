/**
 * Claude Code's real hook payloads (captured from the pinned binary: test/agents/fixtures and
 * ../shared/reference/agent-payloads) translate into events the official AHP validator accepts,
 * carrying what the judge and the receipt need; answers have the native shapes the binary honours.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { validateEvent } from '../../src/ahp/messages/index.js';
import type { BoundaryDecision } from '../../src/boundary/boundary.js';
import { claudeCodeAnswer } from '../../src/capture/claude-code/answer.js';
import { CLAUDE_CODE_EVENTS, translateClaudeCode } from '../../src/capture/claude-code/translate.js';
import { CaptureError } from '../../src/capture/types.js';

const DIRS = [
  new URL('../../../test/agents/fixtures/claude-code/', import.meta.url).pathname,
  new URL('../../../../shared/reference/agent-payloads/claude-code/', import.meta.url).pathname,
];

function payloads(dir: string): { file: string; body: Record<string, unknown> }[] {
  const out: { file: string; body: Record<string, unknown> }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...payloads(path));
    else if (/^(cmd|http)-.*\.json$/.test(name)) {
      const doc = JSON.parse(readFileSync(path, 'utf8')) as { body?: Record<string, unknown> };
      if (doc.body) out.push({ file: path, body: doc.body });
    }
  }
  return out;
}

const all = DIRS.flatMap(payloads);
const KEPT = new Set(['event.unknown-type', 'unknown-field']);

describe('Claude Code payloads → AHP events', () => {
  it('there are real payloads of every event the channel translates but the rare ones', () => {
    const seen = new Set(all.map((p) => p.body.hook_event_name));
    for (const event of [
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'SubagentStart',
      'SubagentStop',
      'Stop',
      'SessionEnd',
      'PermissionRequest',
    ])
      assert.ok(seen.has(event), `no real ${event} payload`);
  });

  it('every real payload of a translated event becomes a valid AHP event', () => {
    let n = 0;
    for (const { file, body } of all) {
      if (!Object.hasOwn(CLAUDE_CODE_EVENTS, String(body.hook_event_name))) continue;
      const captured = translateClaudeCode(body);
      const event = { id: 'evt_test', time: '2026-12-01T00:00:00Z', ...captured.event };
      const issues = validateEvent(event).filter((i) => !KEPT.has(i.rule));
      assert.deepEqual(issues, [], `${file}: ${JSON.stringify(issues)}`);
      assert.equal(captured.harnessSession, body.session_id);
      n += 1;
    }
    assert.ok(n >= 40, `${n} payloads`);
  });

  it('tool calls keep the tool_use_id, the input, the cwd; subagents are attributed to their parent', () => {
    const pre = all.find(
      (p) => p.body.hook_event_name === 'PreToolUse' && p.body.agent_id !== undefined,
    )!.body;
    const c = translateClaudeCode(pre);
    assert.equal(c.mode, 'decide');
    assert.equal((c.event.call as { id: string }).id, pre.tool_use_id);
    assert.deepEqual((c.event.tool as { input: unknown }).input, pre.tool_input);
    assert.equal((c.event.session as { cwd: string }).cwd, pre.cwd);
    assert.deepEqual(c.agent, { instance: pre.agent_id, parent: pre.session_id, type: pre.agent_type });
  });

  it("a Bash PostToolUse reports the files Claude Code's bashEditDiff names; Write reports its file", () => {
    const bash = all.find(
      (p) =>
        p.body.hook_event_name === 'PostToolUse' &&
        p.body.tool_name === 'Bash' &&
        JSON.stringify(p.body).includes('bashEditDiff'),
    )!.body;
    const changes = translateClaudeCode(bash).event.fileChanges as { path: string; change: string }[];
    assert.ok(changes.length > 0);
    for (const c of changes) assert.ok(['created', 'modified'].includes(c.change));
    const write = all.find(
      (p) => p.body.hook_event_name === 'PostToolUse' && p.body.tool_name === 'Write',
    )!.body;
    const wrote = translateClaudeCode(write).event.fileChanges as { path: string }[];
    assert.equal(wrote[0]!.path, (write.tool_input as { file_path: string }).file_path);
    // The response's content is summarised, not copied.
    assert.ok(!JSON.stringify(translateClaudeCode(write).event).includes('"originalFile"'));
  });

  it('a payload that is not one is refused naming the field', () => {
    assert.throws(
      () => translateClaudeCode({ hook_event_name: 'PreToolUse' }),
      (e) => e instanceof CaptureError && e.detail?.pointer === '/session_id',
    );
    assert.throws(
      () => translateClaudeCode({ hook_event_name: 'Bogus', session_id: 's' }),
      (e) => e instanceof CaptureError && e.code === 'unknown-event',
    );
    assert.throws(() => translateClaudeCode([1]), CaptureError);
  });
});

function decision(partial: Partial<BoundaryDecision>): BoundaryDecision {
  return {
    decision: 'allow',
    permission: 'allow',
    effects: { messages: [], injections: [] },
    answers: [],
    recorded: { seq: 1, digest: 'sha256:x' },
    unknownFields: [],
    ...partial,
  };
}

describe('decisions → Claude Code answers', () => {
  it('PreToolUse: allow, deny with the reason, ask; no opinion is {}', () => {
    assert.deepEqual(claudeCodeAnswer('PreToolUse', decision({})), {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' },
    });
    assert.deepEqual(
      claudeCodeAnswer('PreToolUse', decision({ decision: 'deny', permission: 'deny', reason: 'no' })),
      {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'no',
        },
      },
    );
    assert.equal(
      (
        claudeCodeAnswer('PreToolUse', decision({ decision: 'ask', permission: 'ask', reason: 'r' }))
          .hookSpecificOutput as { permissionDecision: string }
      ).permissionDecision,
      'ask',
    );
    assert.deepEqual(claudeCodeAnswer('PreToolUse', decision({ permission: 'none' })), {});
    assert.deepEqual(claudeCodeAnswer('Stop', decision({})), {});
  });

  it('a modified input is sent with an explicit allow; prompts are blocked by decision: block', () => {
    const out = claudeCodeAnswer(
      'PreToolUse',
      decision({ effects: { input: { command: 'ls' }, messages: [], injections: [] } }),
    );
    assert.deepEqual((out.hookSpecificOutput as { updatedInput: unknown }).updatedInput, { command: 'ls' });
    assert.deepEqual(
      claudeCodeAnswer('UserPromptSubmit', decision({ decision: 'deny', permission: 'deny', reason: 'x' })),
      {
        decision: 'block',
        reason: 'x',
      },
    );
  });
});
