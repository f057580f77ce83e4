/**
 * The real Claude Code CLI against the scripted Anthropic API: its command hooks fire for a scripted
 * Write and Bash, and a PreToolUse deny really stops the Write.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CommandHook, commandHook, denyPreToolUse } from './hooks.js';
import { ensureAgent } from './install.js';
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { leftovers } from './temp.js';

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'];

function hookSettings(hook: CommandHook): Record<string, unknown> {
  return {
    hooks: Object.fromEntries(
      EVENTS.map((e) => [e, [{ matcher: '', hooks: [{ type: 'command', command: hook.command(e) }] }]]),
    ),
  };
}

function script(dir: string) {
  return [
    call('Write', { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
    call('Bash', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
    text('All done.'),
  ];
}

/** The tool_result blocks the agent sent back to the model, in order. */
function toolResults(body: unknown): Record<string, unknown>[] {
  return asArray(asRecord(body)?.messages)
    .flatMap((m) => asArray(asRecord(m)?.content))
    .map((b) => asRecord(b) ?? {})
    .filter((b) => b.type === 'tool_result');
}

describe('Claude Code (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('is installed at its pinned version', async () => {
    const agent = await ensureAgent('claude-code');
    assert.equal(agent.version, '2.1.332');
  });

  it('fires its command hooks for a scripted Write and Bash, and talks to nothing but the model', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const hook = commandHook();
    try {
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write a.txt, then b.txt with the shell.',
        script: script(repo.dir),
        settings: hookSettings(hook),
      });
      const calls = hook.calls();
      t.diagnostic(
        `exit ${run.exitCode} in ${run.durationMs} ms; hooks fired: ${calls.map((c) => `${c.label}${c.payload.tool_name ? `(${c.payload.tool_name})` : ''}`).join(' ')}`,
      );
      t.diagnostic(`egress attempts: ${JSON.stringify(run.egress)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(asRecord(run.json)?.result, 'All done.');
      assert.equal(repo.read('a.txt'), 'alpha\n');
      assert.equal(repo.read('b.txt'), 'beta\n');
      assert.deepEqual(
        calls.map((c) => [c.label, c.payload.hook_event_name, c.payload.tool_name ?? null]),
        [
          ['SessionStart', 'SessionStart', null],
          ['UserPromptSubmit', 'UserPromptSubmit', null],
          ['PreToolUse', 'PreToolUse', 'Write'],
          ['PostToolUse', 'PostToolUse', 'Write'],
          ['PreToolUse', 'PreToolUse', 'Bash'],
          ['PostToolUse', 'PostToolUse', 'Bash'],
          ['Stop', 'Stop', null],
          ['SessionEnd', 'SessionEnd', null],
        ],
      );
      const sessionIds = new Set(calls.map((c) => c.payload.session_id));
      assert.equal(sessionIds.size, 1);
      assert.equal(asRecord(run.json)?.session_id, [...sessionIds][0]);
      const preWrite = calls[2]!.payload;
      assert.deepEqual(preWrite.tool_input, { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' });
      assert.equal(preWrite.cwd, repo.dir);
      assert.match(String(preWrite.transcript_path), /\.claude\/projects\/.+\.jsonl$/);
      assert.equal(calls[2]!.env.CLAUDE_PROJECT_DIR, repo.dir);
      assert.deepEqual(
        run.requests.map((r) => [r.method, r.path, r.step]),
        [0, 1, 2].map((k) => ['POST', '/v1/messages?beta=true', k]),
      );
      assert.deepEqual(run.unexpectedRequests, []);
      assert.deepEqual(run.egress, []);
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });

  it('a PreToolUse hook answering deny stops the Write; the model is told why', async (t) => {
    const repo = makeRepo();
    const hook = commandHook([
      { event: 'PreToolUse', tool: 'Write', stdout: denyPreToolUse('no writes here') },
    ]);
    try {
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write a.txt, then b.txt with the shell.',
        script: script(repo.dir),
        settings: hookSettings(hook),
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(existsSync(join(repo.dir, 'a.txt')), false, 'the denied Write must not happen');
      assert.equal(repo.read('b.txt'), 'beta\n', 'the Bash call was not denied');
      const results = toolResults(run.requests[1]?.body);
      t.diagnostic(`tool_result the model saw: ${JSON.stringify(results[0])}`);
      assert.equal(results[0]?.is_error, true);
      assert.match(JSON.stringify(results[0]?.content), /no writes here/);
      const fired = hook.calls().map((c) => `${c.label}:${c.payload.tool_name ?? ''}`);
      assert.ok(
        !fired.includes('PostToolUse:Write'),
        `no PostToolUse for a denied Write: ${fired.join(' ')}`,
      );
      assert.deepEqual(run.egress, []);
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });

  it('beforeStep lets a person edit a file between two model steps; the agent sees the edit', async () => {
    const repo = makeRepo();
    try {
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write a.txt, then show it.',
        script: {
          steps: [
            call('Write', { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' }),
            call('Bash', { command: 'cat a.txt', description: 'Show a.txt' }),
            text('All done.'),
          ],
          // Runs after the agent asked for step 1, before the answer: between the Write and the cat.
          beforeStep: (k) => {
            if (k === 1) writeFileSync(join(repo.dir, 'a.txt'), 'edited by a person\n');
          },
        },
      });
      assert.equal(run.exitCode, 0, run.stderr);
      const results = toolResults(run.requests[2]?.body);
      assert.equal(results[1]?.content, 'edited by a person');
      // Claude Code notices on its own that a file it wrote changed on disk.
      assert.match(JSON.stringify(run.requests[2]?.body), /a\.txt changed on disk since you last read it/);
    } finally {
      repo.cleanup();
    }
  });
});
