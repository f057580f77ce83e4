/**
 * A shell tool's own directory argument is where its command runs: Gemini CLI's `run_shell_command
 * {dir_path}`, Qwen Code's `run_shell_command {directory}` and OpenCode's `bash {workdir}`. Oracle:
 * the pinned CLIs, run against a scripted model (test/agents/README.md): `echo x > abs.txt` with the
 * directory `<project>/protected` wrote `protected/abs.txt` in all three; a relative `sub` (and
 * `./sub/../protected`) was resolved against the project directory by Gemini CLI and OpenCode, and
 * refused by Qwen Code before its hook ran; `""` ran in the project directory; a number was
 * refused (Gemini before its hook, OpenCode after it). Under the adapter tests' certificate such
 * a redirection into protected/ is forbidden, and a directory that cannot be read is opaque.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { translateGeminiCli } from '../../src/capture/gemini-cli/translate.js';
import { translateOpenCode } from '../../src/capture/opencode/translate.js';
import { translateQwenCode } from '../../src/capture/qwen-code/translate.js';
import type { JsonObject } from '../../src/core/json.js';
import { certificatePolicy, judgeCall, normalizeCall } from '../../src/evidence/policy/judge.js';

const ROOT = '/home/user/project';
const FRAME = { root: ROOT, cwd: ROOT };
// The adapter tests' certificate (test/agents/tally-flow.ts), here as its policy.
const POLICY = certificatePolicy({
  bounded_actions: ['Write(*.txt)', 'Edit(*.txt)', 'Bash(echo *)'],
  forbidden: ['Write(protected/**)', 'Write(secret.txt)'],
  escalation_required: [],
} as never);

const AGENTS = {
  gemini: (dir: Record<string, unknown>) =>
    translateGeminiCli({
      session_id: 's-gemini',
      transcript_path: '/home/user/.gemini/tmp/p/chats/session.jsonl',
      cwd: ROOT,
      hook_event_name: 'BeforeTool',
      timestamp: '2026-12-06T04:00:00.000Z',
      tool_name: 'run_shell_command',
      tool_input: { command: 'echo x > gm.txt', description: 'd', ...dir },
    }),
  qwen: (dir: Record<string, unknown>) =>
    translateQwenCode({
      session_id: 's-qwen',
      cwd: ROOT,
      hook_event_name: 'PreToolUse',
      tool_name: 'run_shell_command',
      tool_input: { command: 'echo x > qw.txt', description: 'd', ...dir },
      tool_use_id: 'call-1',
    }),
  opencode: (dir: Record<string, unknown>) =>
    translateOpenCode({
      hook_event_name: 'tool.execute.before',
      session_id: 'ses_1',
      cwd: ROOT,
      input: { tool: 'bash', sessionID: 'ses_1', callID: 'call_1' },
      output: { args: { command: 'echo x > oc.txt', description: 'd', ...dir } },
    }),
} as const;
const FIELD = { gemini: 'dir_path', qwen: 'directory', opencode: 'workdir' } as const;

function verdictOf(event: JsonObject): string {
  const call = normalizeCall(event, FRAME);
  assert.ok(call);
  return judgeCall(POLICY, call).verdict;
}

describe('a shell tool’s directory argument is where its command runs', () => {
  for (const [agent, translate] of Object.entries(AGENTS)) {
    const field = FIELD[agent as keyof typeof FIELD];
    it(`${agent}: ${field} is the call's cwd, and a redirection there is judged there`, () => {
      const into = (value: unknown) => translate({ [field]: value }).event;
      assert.equal(verdictOf(translate({}).event), 'allowed', 'in the project directory');
      const absolute = into(`${ROOT}/protected`);
      assert.equal((absolute.session as JsonObject).cwd, `${ROOT}/protected`);
      assert.equal(verdictOf(absolute), 'forbidden');
      assert.equal((into(`${ROOT}/protected/`).session as JsonObject).cwd, `${ROOT}/protected`);
      // Resolved against the project directory, as Gemini CLI and OpenCode resolve it.
      assert.equal((into('./sub/../protected').session as JsonObject).cwd, `${ROOT}/protected`);
      assert.equal(verdictOf(into('./sub/../protected')), 'forbidden');
      const sub = into('sub');
      assert.equal((sub.session as JsonObject).cwd, `${ROOT}/sub`);
      assert.equal(verdictOf(sub), 'allowed', 'sub/*.txt is allowed by Write(*.txt)');
      assert.equal(verdictOf(into(`${ROOT}/src/../protected/deeper`)), 'forbidden');
    });

    it(`${agent}: a ${field} that cannot be read makes the call opaque`, () => {
      for (const value of ['', 5, null, ['protected'], 'pro\ntected', 'a\\b']) {
        const event = translate({ [field]: value }).event;
        assert.equal((event.session as JsonObject).cwd, ROOT, JSON.stringify(value));
        const reason = (event.extensions as JsonObject)['dev.tally.opaque'];
        assert.match(String(reason), new RegExp(`${field} .* is not a directory Tally can read`));
        // Opaque under a certificate with forbids: escalated (a headless agent refuses it).
        const call = normalizeCall(event, FRAME);
        assert.ok(call);
        const judged = judgeCall(POLICY, call);
        assert.equal(judged.verdict, 'escalate', JSON.stringify(value));
        assert.match(String(judged.reason), /is not a directory Tally can read/);
        assert.equal(judgeCall({ ...POLICY, opaqueShell: 'deny' }, call).verdict, 'forbidden');
      }
    });
  }

  it('only the shell tool’s directory counts: a file tool’s path is its own argument', () => {
    const event = translateGeminiCli({
      session_id: 's-files',
      transcript_path: '/home/user/.gemini/tmp/p/chats/session.jsonl',
      cwd: ROOT,
      hook_event_name: 'BeforeTool',
      timestamp: '2026-12-06T04:00:01.000Z',
      tool_name: 'list_directory',
      tool_input: { dir_path: 'protected' },
    }).event;
    assert.equal((event.session as JsonObject).cwd, ROOT);
    assert.equal((event.extensions as JsonObject)['dev.tally.opaque'], undefined);
  });

  it('the call’s after event says the same directory', () => {
    const after = translateQwenCode({
      session_id: 's-qwen',
      cwd: ROOT,
      hook_event_name: 'PostToolUse',
      tool_name: 'run_shell_command',
      tool_input: { command: 'echo x > qw.txt', directory: `${ROOT}/protected` },
      tool_response: { llmContent: '' },
      tool_use_id: 'call-1',
    }).event;
    assert.equal((after.session as JsonObject).cwd, `${ROOT}/protected`);
  });

  it('qwen: a subagent pinned to a working_dir runs its commands there', () => {
    // The payloads the pinned Qwen Code sent (test/agents/README.md): its subagent is named
    // `<subagent_type>-<tool_call_id of the agent call>` and reports the session's cwd.
    const wt = `${ROOT}/protected/wt`;
    const qwen = (payload: JsonObject) => translateQwenCode({ session_id: 's-pin', cwd: ROOT, ...payload });
    qwen({
      hook_event_name: 'PreToolUse',
      tool_name: 'agent',
      tool_input: { description: 'd', prompt: 'p', subagent_type: 'general-purpose', working_dir: wt },
      tool_use_id: 'toolu_1796532340732_bq3r3ycgj',
      tool_call_id: 'call_m_0_0',
    });
    const shell = (agent: string, input: JsonObject = {}) =>
      qwen({
        hook_event_name: 'PreToolUse',
        tool_name: 'run_shell_command',
        tool_input: { command: 'echo x > sa.txt', description: 'd', ...input },
        tool_use_id: `t-${agent}`,
        agent_id: agent,
      });
    const pinned = shell('general-purpose-call_m_0_0');
    assert.equal((pinned.event.session as JsonObject).cwd, wt);
    assert.equal(pinned.cwd, ROOT, 'the recorder still finds the session by the cwd Qwen reported');
    assert.equal(verdictOf(pinned.event), 'forbidden');
    // Its own directory argument is read from there; another subagent is not pinned.
    assert.equal(
      (shell('general-purpose-call_m_0_0', { directory: `${ROOT}/sub` }).event.session as JsonObject).cwd,
      `${ROOT}/sub`,
    );
    assert.equal((shell('general-purpose-call_m_9_0').event.session as JsonObject).cwd, ROOT);
    // A working_dir that cannot be read: the subagent's calls are opaque.
    qwen({
      hook_event_name: 'PreToolUse',
      tool_name: 'agent',
      tool_input: { description: 'd', prompt: 'p', working_dir: 7 },
      tool_use_id: 'toolu_1796532340733_aaaaaaaaa',
      tool_call_id: 'call_m_1_0',
    });
    const unknown = shell('general-purpose-call_m_1_0').event;
    assert.match(String((unknown.extensions as JsonObject)['dev.tally.opaque']), /working_dir 7/);
  });
});
