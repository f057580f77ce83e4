/**
 * The real hook payloads captured from the pinned Gemini CLI, Qwen Code, Codex and OpenCode
 * (../shared/reference/agent-payloads) translate into events the official AHP validator accepts;
 * Codex's apply_patch yields every file it touches; answers have the shapes each CLI was seen to
 * honour (test/agents/README.md); bad input names the field at fault.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { validateEvent } from '../../src/ahp/messages/index.js';
import type { BoundaryDecision } from '../../src/boundary/boundary.js';
import { ADAPTERS } from '../../src/capture/adapters.js';
import { patchChanges } from '../../src/capture/codex/patch.js';
import { CaptureError } from '../../src/capture/types.js';

const ROOT = new URL('../../../../shared/reference/agent-payloads/', import.meta.url).pathname;
const KEPT = new Set(['event.unknown-type', 'unknown-field']);

/** The payload a hook received: the body of a command/http hook, the plugin's arguments for OpenCode. */
function payloads(agent: string): { file: string; body: Record<string, unknown> }[] {
  return readdirSync(join(ROOT, agent)).map((name) => {
    const doc = JSON.parse(readFileSync(join(ROOT, agent, name), 'utf8')) as Record<string, unknown>;
    if (agent !== 'opencode') return { file: name, body: doc.body as Record<string, unknown> };
    // What Tally's plugin posts for each OpenCode hook.
    const input = doc.input as Record<string, unknown> | undefined;
    const event = doc.event as { type?: string; properties?: { sessionID?: string } } | undefined;
    const body =
      doc.hook === 'event'
        ? {
            hook_event_name: `event.${event?.type}`,
            session_id: event?.properties?.sessionID,
            cwd: '/home/user/project',
            event,
          }
        : {
            hook_event_name: doc.hook,
            session_id: input?.sessionID,
            cwd: '/home/user/project',
            input,
            output: doc.output,
          };
    return { file: name, body };
  });
}

const TRANSLATED: Record<string, string[]> = {
  'gemini-cli': ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd'],
  'qwen-code': ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'],
  codex: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'],
  opencode: [
    'event.session.created',
    'chat.message',
    'tool.execute.before',
    'tool.execute.after',
    'event.session.idle',
  ],
};

describe('real payloads of the native adapters → AHP events', () => {
  for (const [agent, events] of Object.entries(TRANSLATED)) {
    it(`${agent}: every real payload of a covered event is a valid AHP event`, () => {
      const seen = new Set<string>();
      for (const { file, body } of payloads(agent)) {
        if (!events.includes(String(body.hook_event_name))) continue;
        const captured = ADAPTERS[agent]!.translate(body);
        const event = { id: 'evt_test', time: '2026-12-01T00:00:00Z', ...captured.event };
        const issues = validateEvent(event).filter((i) => !KEPT.has(i.rule));
        assert.deepEqual(issues, [], `${file}: ${JSON.stringify(issues)}`);
        seen.add(String(body.hook_event_name));
      }
      assert.deepEqual([...seen].sort(), [...events].sort());
    });
  }

  it('Gemini CLI: BeforeTool and AfterTool of one call get the same call id; a write reports its file', () => {
    const all = payloads('gemini-cli');
    const before = all.find((p) => p.file === 'cmd-BeforeTool-write_file-1.json')!.body;
    const afterW = all.find((p) => p.file === 'cmd-AfterTool-write_file-1.json')!.body;
    const b = ADAPTERS['gemini-cli']!.translate(before).event;
    const a = ADAPTERS['gemini-cli']!.translate(afterW).event;
    assert.equal((b.call as { id: string }).id, (a.call as { id: string }).id);
    assert.deepEqual(a.fileChanges, [{ path: '/home/user/project/a.txt', change: 'created' }]);
  });

  it('Codex: a real apply_patch PostToolUse reports the file it added', () => {
    const post = payloads('codex').find((p) => p.file === 'cmd-PostToolUse-apply_patch-1.json')!.body;
    assert.deepEqual(ADAPTERS.codex!.translate(post).event.fileChanges, [
      { path: 'a.txt', change: 'created' },
    ]);
  });

  it('apply_patch: adds, updates, deletes and moves', () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: new.txt',
      '+n',
      '*** Update File: src/a.ts',
      '@@',
      '-x',
      '+y',
      '*** Update File: old/name.ts',
      '*** Move to: new/name.ts',
      '*** Delete File: gone.txt',
      '*** End Patch',
    ].join('\n');
    assert.deepEqual(patchChanges(patch), [
      { path: 'new.txt', change: 'created' },
      { path: 'src/a.ts', change: 'modified' },
      { path: 'new/name.ts', change: 'moved', previousPath: 'old/name.ts' },
      { path: 'gone.txt', change: 'deleted' },
    ]);
  });

  it('apply_patch: a header indented by whitespace is a header (Codex trims each line before matching)', () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: ok.txt',
      '+ok',
      ' *** Add File: protected/a.txt',
      '+a',
      '\t*** Delete File: protected/b.txt',
      '\u00a0*** Update File: protected/c.txt',
      '*** End Patch',
    ].join('\n');
    assert.deepEqual(patchChanges(patch), [
      { path: 'ok.txt', change: 'created' },
      { path: 'protected/a.txt', change: 'created' },
      { path: 'protected/b.txt', change: 'deleted' },
      { path: 'protected/c.txt', change: 'modified' },
    ]);
  });

  it('MCP tools named by a hook payload alone are valid AHP events, their connection declared unreported', () => {
    const cases: [string, Record<string, unknown>][] = [
      [
        'claude-code',
        {
          hook_event_name: 'PreToolUse',
          session_id: 's',
          cwd: '/p',
          tool_name: 'mcp__fs__write_file',
          tool_input: { path: 'a.txt', content: 'x' },
          tool_use_id: 'toolu_1',
        },
      ],
      [
        'opencode',
        {
          hook_event_name: 'tool.execute.before',
          session_id: 's',
          cwd: '/p',
          input: { tool: 'fs_write_file', sessionID: 's', callID: 'c1' },
          output: { args: { path: 'a.txt', content: 'x' } },
        },
      ],
    ];
    for (const [agent, body] of cases) {
      const captured = ADAPTERS[agent]!.translate(body);
      const event = { id: 'evt_test', time: '2026-12-01T00:00:00Z', ...captured.event };
      assert.deepEqual(validateEvent(event), [], agent);
      const tool = captured.event.tool as {
        origin: string;
        mcp: { server: { id: string }; toolName: string };
      };
      assert.equal(tool.origin, 'mcp', agent);
      assert.deepEqual([tool.mcp.server.id, tool.mcp.toolName], ['fs', 'write_file'], agent);
    }
  });

  it("OpenCode's apply_patch (offered to GPT-5-class models) is a file edit whose patch names its files", () => {
    const patchText = '*** Begin Patch\n*** Add File: protected/x.txt\n+x\n*** End Patch';
    const captured = ADAPTERS.opencode!.translate({
      hook_event_name: 'tool.execute.before',
      session_id: 's',
      cwd: '/p',
      input: { tool: 'apply_patch', sessionID: 's', callID: 'c1' },
      output: { args: { patchText } },
    });
    const event = { id: 'evt_test', time: '2026-12-01T00:00:00Z', ...captured.event };
    assert.deepEqual(validateEvent(event), []);
    assert.deepEqual(captured.event.tool, {
      origin: 'native',
      name: 'apply_patch',
      kind: 'file_edit',
      input: { patchText },
    });
  });

  it('bad input names the field', () => {
    assert.throws(
      () => ADAPTERS['gemini-cli']!.translate({ hook_event_name: 'BeforeTool', session_id: 's' }),
      (e: unknown) => e instanceof CaptureError && e.detail?.pointer === '/tool_name',
    );
    assert.throws(
      () =>
        ADAPTERS.opencode!.translate({
          hook_event_name: 'tool.execute.before',
          session_id: 's',
          input: { tool: 'bash' },
          output: {},
        }),
      (e: unknown) => e instanceof CaptureError && e.detail?.pointer === '/input/callID',
    );
    assert.throws(
      () => ADAPTERS.cursor!.translate({ hook_event_name: 'beforeShellExecution', conversation_id: 'c' }),
      (e: unknown) => e instanceof CaptureError && e.detail?.pointer === '/command',
    );
    assert.throws(
      () => ADAPTERS.codex!.translate({ hook_event_name: 'Bogus', session_id: 's' }),
      CaptureError,
    );
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

describe('decisions → each agent’s answer', () => {
  const deny = decision({ decision: 'deny', permission: 'deny', reason: 'no' });
  const ask = decision({ decision: 'ask', permission: 'ask', reason: 'needs review' });
  it('Gemini CLI: deny as decision/reason; ask is a deny (a headless Gemini hangs on ask)', () => {
    assert.deepEqual(ADAPTERS['gemini-cli']!.answer('BeforeTool', deny), { decision: 'deny', reason: 'no' });
    const asked = ADAPTERS['gemini-cli']!.answer('BeforeTool', ask);
    assert.equal(asked.decision, 'deny');
    assert.match(String(asked.reason), /needs review.*approval/);
    assert.equal(JSON.stringify(asked).includes('permissionDecision'), false);
  });
  it('Codex: deny through hookSpecificOutput; ask is a deny (Codex lets ask through)', () => {
    const asked = ADAPTERS.codex!.answer('PreToolUse', ask) as { hookSpecificOutput: Record<string, string> };
    assert.equal(asked.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(asked.hookSpecificOutput.permissionDecisionReason!, /approval/);
    assert.deepEqual(ADAPTERS.codex!.answer('PreToolUse', decision({})), {});
  });
  it('a supplied result (`return`) is a deny in every agent: none can return it instead of running the tool', () => {
    const supplied = decision({
      permission: 'none',
      effects: { messages: [], injections: [], result: { content: [] } },
    });
    const cases: [string, string][] = [
      ['claude-code', 'PreToolUse'],
      ['qwen-code', 'PreToolUse'],
      ['codex', 'PreToolUse'],
      ['gemini-cli', 'BeforeTool'],
      ['opencode', 'tool.execute.before'],
      ['cursor', 'beforeShellExecution'],
    ];
    for (const [agent, event] of cases) {
      const text = JSON.stringify(ADAPTERS[agent]!.answer(event, supplied));
      assert.match(text, /"deny"/, `${agent}: ${text}`);
      assert.match(text, /supplied this call’s result/, agent);
    }
  });
  it('Qwen Code: Claude Code’s answers, ask kept', () => {
    assert.deepEqual(ADAPTERS['qwen-code']!.answer('PreToolUse', ask), {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: 'needs review',
      },
    });
  });
  it('OpenCode and Cursor', () => {
    assert.deepEqual(ADAPTERS.opencode!.answer('tool.execute.before', deny), {
      decision: 'deny',
      reason: 'no',
    });
    assert.deepEqual(ADAPTERS.cursor!.answer('beforeShellExecution', deny), {
      permission: 'deny',
      user_message: 'no',
      agent_message: 'no',
    });
    assert.deepEqual(ADAPTERS.cursor!.answer('beforeSubmitPrompt', deny), {
      continue: false,
      user_message: 'no',
    });
  });
});
