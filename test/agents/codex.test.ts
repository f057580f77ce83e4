/**
 * The real Codex CLI against the scripted Responses API: user hooks stay silent until trusted; once
 * trusted through Codex's own app-server they fire for a scripted apply_patch and shell command,
 * and a PreToolUse deny really stops both.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CommandHook, commandHook, decidePreToolUse, denyPreToolUse } from './hooks.js';
import { ensureAgent } from './install.js';
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import type { CodexHook } from './profiles/codex-trust.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { leftovers } from './temp.js';

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'];
const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n';

function hooksFile(hook: CommandHook): Record<string, string> {
  const hooks = Object.fromEntries(
    EVENTS.map((e) => [e, [{ matcher: '', hooks: [{ type: 'command', command: hook.command(e) }] }]]),
  );
  return { '.codex/hooks.json': JSON.stringify({ hooks }) };
}

function script(dir: string) {
  return [
    call('apply_patch', PATCH),
    call('exec_command', { cmd: 'echo beta > b.txt', workdir: dir }),
    text('All done.'),
  ];
}

/** The outputs of tool calls the agent sent back to the model, in order, without repeats. */
function toolOutputs(requests: { body: unknown }[]): string[] {
  const seen = requests.flatMap((r) =>
    asArray(asRecord(r.body)?.input)
      .map((i) => asRecord(i) ?? {})
      .filter((i) => String(i.type).endsWith('_call_output'))
      .map((i) => String(i.output)),
  );
  return [...new Set(seen)];
}

describe('Codex (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('is installed at its pinned version', async () => {
    assert.equal((await ensureAgent('codex')).version, '0.171.0');
  });

  it('skips untrusted user hooks without a word', async () => {
    const repo = makeRepo();
    const hook = commandHook();
    try {
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Write a.txt.',
        script: script(repo.dir),
        files: hooksFile(hook),
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('a.txt'), 'alpha\n');
      assert.deepEqual(hook.calls(), [], 'no hook may run before it is trusted');
      assert.doesNotMatch(run.stderr, /hook/i, 'Codex says nothing about the skipped hooks');
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });

  it('fires trusted hooks for apply_patch and the shell, and talks to nothing but the model', async (t) => {
    const repo = makeRepo();
    const hook = commandHook();
    try {
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Write a.txt, then b.txt with the shell.',
        script: script(repo.dir),
        files: hooksFile(hook),
        trustHooks: true,
      });
      const calls = hook.calls();
      t.diagnostic(
        `exit ${run.exitCode} in ${run.durationMs} ms; hooks fired: ${calls.map((c) => `${c.label}${c.payload.tool_name ? `(${c.payload.tool_name})` : ''}`).join(' ')}`,
      );
      t.diagnostic(`egress attempts: ${JSON.stringify(run.egress)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const trust = (run.setup as CodexHook[]).map((h) => [h.eventName, h.source, h.trustStatus]);
      assert.equal(trust.length, EVENTS.length);
      assert.ok(
        trust.every(([, source, status]) => source === 'user' && status === 'trusted'),
        JSON.stringify(trust),
      );
      assert.equal(repo.read('a.txt'), 'alpha\n');
      assert.equal(repo.read('b.txt'), 'beta\n');
      assert.deepEqual(
        calls.map((c) => [c.label, c.payload.tool_name ?? null]),
        [
          ['SessionStart', null],
          ['UserPromptSubmit', null],
          ['PreToolUse', 'apply_patch'],
          ['PostToolUse', 'apply_patch'],
          ['PreToolUse', 'Bash'],
          ['PostToolUse', 'Bash'],
          ['Stop', null],
          ['SessionEnd', null],
        ],
      );
      // The whole patch text arrives as the command; file paths must be read out of it.
      assert.deepEqual(calls[2]!.payload.tool_input, { command: PATCH });
      assert.deepEqual(calls[4]!.payload.tool_input, { command: 'echo beta > b.txt' });
      assert.equal(calls[2]!.payload.cwd, repo.dir);
      assert.match(String(calls[2]!.payload.transcript_path), /\.codex\/sessions\/.+\/rollout-.+\.jsonl$/);
      assert.equal(new Set(calls.map((c) => c.payload.session_id)).size, 1);
      assert.deepEqual(run.unexpectedRequests, []);
      assert.deepEqual(run.egress, []);
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });

  it('a PreToolUse deny stops apply_patch and the shell command; the model is told why', async (t) => {
    const repo = makeRepo();
    const hook = commandHook([
      { event: 'PreToolUse', tool: 'apply_patch', stdout: denyPreToolUse('no patches') },
      { event: 'PreToolUse', tool: 'Bash', stdout: denyPreToolUse('no shell') },
    ]);
    try {
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Write a.txt, then b.txt with the shell.',
        script: script(repo.dir),
        files: hooksFile(hook),
        trustHooks: true,
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(existsSync(join(repo.dir, 'a.txt')), false);
      assert.equal(existsSync(join(repo.dir, 'b.txt')), false);
      const outputs = toolOutputs(run.requests);
      t.diagnostic(`tool outputs the model saw: ${JSON.stringify(outputs)}`);
      assert.match(outputs[0] ?? '', /^Command blocked by PreToolUse hook: no patches/);
      assert.match(outputs[1] ?? '', /^Command blocked by PreToolUse hook: no shell/);
      assert.ok(!hook.calls().some((c) => c.label === 'PostToolUse'), 'no PostToolUse for a blocked tool');
      assert.deepEqual(run.egress, []);
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });

  it('a PreToolUse "ask" fails open in exec: the patch and the command run', async () => {
    const repo = makeRepo();
    const hook = commandHook([{ event: 'PreToolUse', stdout: decidePreToolUse('ask', 'please ask') }]);
    try {
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Write a.txt, then b.txt with the shell.',
        script: script(repo.dir),
        files: hooksFile(hook),
        trustHooks: true,
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('a.txt'), 'alpha\n');
      assert.equal(repo.read('b.txt'), 'beta\n');
      assert.equal(hook.calls().filter((c) => c.label === 'PostToolUse').length, 2);
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });
});
