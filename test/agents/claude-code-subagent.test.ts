/**
 * Claude Code subagents (the Agent tool): the subagent's own tool calls reach the hooks under the
 * parent's session, and its transcript is stored beside the parent's. A scripted thread plays the
 * subagent's model.
 */
import assert from 'node:assert/strict';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { commandHook } from './hooks.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { leftovers } from './temp.js';

const EVENTS = ['PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop'];

function lines(jsonl: string): Record<string, unknown>[] {
  return jsonl
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The content blocks of a transcript line's message. */
function blocks(line: Record<string, unknown>): Record<string, unknown>[] {
  const content = (line.message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
}

describe('Claude Code subagents (real CLI)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it("fires hooks for the subagent's own Write under the parent's session and keeps its transcript apart", async (t) => {
    const repo = makeRepo();
    const hook = commandHook();
    try {
      const hooks = Object.fromEntries(
        EVENTS.map((e) => [e, [{ matcher: '', hooks: [{ type: 'command', command: hook.command(e) }] }]]),
      );
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Delegate the sub file to a subagent.',
        script: {
          steps: [
            call('Agent', {
              description: 'Write sub file',
              prompt: 'SUBTASK-ALPHA: write sub.txt',
              subagent_type: 'general-purpose',
              // Agents run in the background unless told otherwise.
              run_in_background: false,
            }),
            text('Main done.'),
          ],
          threads: [
            {
              match: 'SUBTASK-ALPHA',
              steps: [
                call('Write', { file_path: join(repo.dir, 'sub.txt'), content: 'from subagent\n' }),
                text('Sub done.'),
              ],
            },
          ],
        },
        settings: { hooks },
        collect: ['.claude/projects'],
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('sub.txt'), 'from subagent\n');
      const calls = hook.calls();
      t.diagnostic(
        `hooks: ${calls.map((c) => `${c.label}${c.payload.tool_name ? `(${c.payload.tool_name})` : ''}`).join(' ')}`,
      );
      assert.deepEqual(
        calls.map((c) => [c.label, c.payload.tool_name ?? null, typeof c.payload.agent_id === 'string']),
        [
          ['PreToolUse', 'Agent', false],
          ['SubagentStart', null, true],
          ['PreToolUse', 'Write', true],
          ['PostToolUse', 'Write', true],
          ['SubagentStop', null, true],
          ['PostToolUse', 'Agent', false],
        ],
      );
      const [preAgent, start, preWrite, , stop, postAgent] = calls.map((c) => c.payload);
      assert.equal(
        preWrite!.session_id,
        preAgent!.session_id,
        "the subagent's calls carry the parent's session_id",
      );
      assert.equal(preWrite!.transcript_path, preAgent!.transcript_path, "and the parent's transcript_path");
      assert.equal(preWrite!.agent_id, start!.agent_id);
      assert.equal(preWrite!.agent_type, 'general-purpose');
      assert.equal(stop!.last_assistant_message, 'Sub done.');
      assert.equal((postAgent!.tool_response as { agentId?: unknown }).agentId, start!.agent_id);

      // Transcripts: the parent's, and the subagent's under <session>/subagents/.
      const main = run.collected[relative(run.home, String(preAgent!.transcript_path))];
      const sub = run.collected[relative(run.home, String(stop!.agent_transcript_path))];
      assert.ok(main && sub, `transcripts collected: ${Object.keys(run.collected).join(', ')}`);
      assert.match(String(stop!.agent_transcript_path), /\/subagents\/agent-[0-9a-f]+\.jsonl$/);
      const subUse = lines(sub).find((l) =>
        blocks(l).some((b) => b.type === 'tool_use' && b.name === 'Write'),
      );
      assert.equal(subUse?.isSidechain, true);
      assert.equal(subUse?.agentId, start!.agent_id);
      assert.equal(subUse?.sessionId, preAgent!.session_id);
      const subResult = lines(sub).find((l) => blocks(l).some((b) => b.type === 'tool_result'));
      assert.equal(subResult?.toolUseResult, undefined, 'subagent tool results carry no toolUseResult');
      const agentResult = lines(main).find((l) => blocks(l).some((b) => b.type === 'tool_result'));
      assert.equal(
        (agentResult?.toolUseResult as { agentId?: unknown } | undefined)?.agentId,
        start!.agent_id,
      );
      assert.ok(
        !lines(main).some((l) => blocks(l).some((b) => b.name === 'Write')),
        "the subagent's Write is not in the main transcript",
      );
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });
});
