/**
 * The real Gemini CLI against the scripted Gemini API: its command hooks fire for a scripted
 * write_file and run_shell_command, and a BeforeTool `{"decision":"deny"}` really stops the write.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CommandAnswer, type CommandHook, commandHook } from './hooks.js';
import { ensureAgent } from './install.js';
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { type AgentRun, runAgent } from './runner.js';
import { leftovers } from './temp.js';

// The per-model-turn events (BeforeModel, AfterModel, BeforeToolSelection, PreCompress) fire too;
// they are left out here because each costs a hook process per turn.
const EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd'];

function settings(hook: CommandHook): Record<string, unknown> {
  return {
    hooks: Object.fromEntries(
      EVENTS.map((e) => [e, [{ matcher: '', hooks: [{ type: 'command', command: hook.command(e) }] }]]),
    ),
  };
}

async function run(dir: string, hook: CommandHook): Promise<AgentRun> {
  return runAgent({
    agent: 'gemini-cli',
    cwd: dir,
    prompt: 'Write a.txt, then b.txt with the shell.',
    script: [
      call('write_file', { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
      call('run_shell_command', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
      text('All done.'),
    ],
    settings: settings(hook),
  });
}

/** The functionResponse payloads the agent sent back to the model, in order, without repeats. */
function toolResponses(r: AgentRun): string[] {
  const all = r.requests.flatMap((q) =>
    asArray(asRecord(q.body)?.contents)
      .flatMap((c) => asArray(asRecord(c)?.parts))
      .map((p) => asRecord(asRecord(p)?.functionResponse)?.response)
      .filter((x) => x !== undefined)
      .map((x) => JSON.stringify(x)),
  );
  return [...new Set(all)];
}

async function withRepo(
  answers: CommandAnswer[],
  body: (dir: string, hook: CommandHook) => Promise<void>,
): Promise<void> {
  const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
  const hook = commandHook(answers);
  try {
    await body(repo.dir, hook);
  } finally {
    hook.cleanup();
    repo.cleanup();
  }
}

describe('Gemini CLI (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('is installed at its pinned version', async () => {
    assert.equal((await ensureAgent('gemini-cli')).version, '0.61.0');
  });

  it('fires its command hooks for write_file and run_shell_command, and talks to nothing but the model', async (t) => {
    await withRepo([], async (dir, hook) => {
      const r = await run(dir, hook);
      const calls = hook.calls();
      t.diagnostic(
        `exit ${r.exitCode} in ${r.durationMs} ms; hooks fired: ${calls.map((c) => `${c.label}${c.payload.tool_name ? `(${c.payload.tool_name})` : ''}`).join(' ')}`,
      );
      t.diagnostic(
        `model calls: ${r.requests.map((q) => q.path.split(':').pop()).join(' ')}; egress: ${JSON.stringify(r.egress)}`,
      );
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(asRecord(r.json)?.response, 'All done.');
      assert.equal(existsSync(join(dir, 'a.txt')) && existsSync(join(dir, 'b.txt')), true);
      assert.deepEqual(
        calls.map((c) => [c.label, c.payload.hook_event_name, c.payload.tool_name ?? null]),
        [
          ['SessionStart', 'SessionStart', null],
          ['BeforeAgent', 'BeforeAgent', null],
          ['BeforeTool', 'BeforeTool', 'write_file'],
          ['AfterTool', 'AfterTool', 'write_file'],
          ['BeforeTool', 'BeforeTool', 'run_shell_command'],
          ['AfterTool', 'AfterTool', 'run_shell_command'],
          ['AfterAgent', 'AfterAgent', null],
          ['SessionEnd', 'SessionEnd', null],
        ],
      );
      assert.deepEqual(calls[2]!.payload.tool_input, { file_path: join(dir, 'a.txt'), content: 'alpha\n' });
      assert.equal(calls[2]!.env.GEMINI_PROJECT_DIR, dir);
      assert.match(String(calls[2]!.payload.transcript_path), /\.gemini\/tmp\/.+\/chats\/session-.+\.jsonl$/);
      // One router side call (generateContent), then one streamed call per step.
      assert.deepEqual(
        r.requests.map((q) => q.path.replace(/^\/v1beta\/models\/[^:]+:/, '')),
        [
          'generateContent',
          'streamGenerateContent?alt=sse',
          'streamGenerateContent?alt=sse',
          'streamGenerateContent?alt=sse',
        ],
      );
      assert.deepEqual(r.unexpectedRequests, []);
      assert.deepEqual(r.egress, []);
    });
  });

  it('a BeforeTool hook answering {"decision":"deny"} stops write_file; the model is told why', async (t) => {
    await withRepo(
      [{ label: 'BeforeTool', tool: 'write_file', stdout: { decision: 'deny', reason: 'no writes here' } }],
      async (dir, hook) => {
        const r = await run(dir, hook);
        assert.equal(r.exitCode, 0, r.stderr);
        assert.equal(existsSync(join(dir, 'a.txt')), false, 'the denied write must not happen');
        assert.equal(existsSync(join(dir, 'b.txt')), true, 'the shell call was not denied');
        const responses = toolResponses(r);
        t.diagnostic(`responses the model saw: ${JSON.stringify(responses)}`);
        assert.deepEqual(JSON.parse(responses[0] ?? '{}'), {
          error: 'Tool execution blocked: no writes here',
        });
        assert.ok(!hook.calls().some((c) => c.label === 'AfterTool' && c.payload.tool_name === 'write_file'));
        assert.deepEqual(r.egress, []);
      },
    );
  });

  it('a BeforeTool {"decision":"ask"} hangs headless: it waits for a person until the harness kills it', async (t) => {
    await withRepo(
      [{ label: 'BeforeTool', tool: 'write_file', stdout: { decision: 'ask', reason: 'asking' } }],
      async (dir, hook) => {
        // Notification is subscribed here too: it is how the hang shows.
        const s = settings(hook) as { hooks: Record<string, unknown> };
        s.hooks.Notification = [
          { matcher: '', hooks: [{ type: 'command', command: hook.command('Notification') }] },
        ];
        const controller = new AbortController();
        const waiting = (): boolean =>
          hook.calls().some((c) => c.payload.notification_type === 'ToolPermission');
        const watch = setInterval(() => waiting() && controller.abort(), 100);
        try {
          const r = await runAgent({
            agent: 'gemini-cli',
            cwd: dir,
            prompt: 'Write a.txt.',
            script: [
              call('write_file', { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
              text('All done.'),
            ],
            settings: s,
            signal: controller.signal,
          });
          const note = hook.calls().find((c) => c.label === 'Notification')?.payload;
          t.diagnostic(
            `killed while waiting: ${JSON.stringify({ aborted: r.aborted, timedOut: r.timedOut, exit: r.exitCode, notification: note?.message })}`,
          );
          // It asked for a person (the notification) and never went on; whether the harness's
          // abort or the CLI's own exit ended it first is a race under load, not the behaviour.
          assert.ok(note !== undefined, 'it asked for a person');
          assert.equal(r.timedOut, false);
          assert.equal(existsSync(join(dir, 'a.txt')), false);
          assert.equal(
            r.requests.filter((q) => q.thread === 'main').length,
            1,
            'no answer ever went back to the model',
          );
        } finally {
          clearInterval(watch);
        }
      },
    );
  });
});
