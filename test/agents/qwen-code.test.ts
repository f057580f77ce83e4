/**
 * The real Qwen Code CLI against the scripted Chat Completions API: its command and http hooks fire
 * for a scripted write_file and run_shell_command, and an http PreToolUse deny really stops the write.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CommandHook, commandHook, denyPreToolUse, type HttpHook, httpHook } from './hooks.js';
import { ensureAgent } from './install.js';
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { type AgentRun, runAgent } from './runner.js';
import { leftovers } from './temp.js';

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'];

function settings(cmd: CommandHook, http: HttpHook): Record<string, unknown> {
  const hooks = (e: string) => [
    { type: 'command', command: cmd.command(e) },
    { type: 'http', url: http.urlFor(e) },
  ];
  return { hooks: Object.fromEntries(EVENTS.map((e) => [e, [{ matcher: '', hooks: hooks(e) }]])) };
}

async function run(dir: string, cmd: CommandHook, http: HttpHook): Promise<AgentRun> {
  return runAgent({
    agent: 'qwen-code',
    cwd: dir,
    prompt: 'Write a.txt, then b.txt with the shell.',
    script: [
      call('write_file', { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
      call('run_shell_command', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
      text('All done.'),
    ],
    settings: settings(cmd, http),
  });
}

function label(c: { label: string; payload: Record<string, unknown> }): string {
  return `${c.label}${c.payload.tool_name ? `(${c.payload.tool_name})` : ''}`;
}

describe('Qwen Code (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('is installed at its pinned version', async () => {
    assert.equal((await ensureAgent('qwen-code')).version, '0.24.4');
  });

  it('fires command and http hooks for write_file and run_shell_command, and talks to nothing but the model', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const cmd = commandHook();
    const http = await httpHook();
    try {
      const r = await run(repo.dir, cmd, http);
      t.diagnostic(
        `exit ${r.exitCode} in ${r.durationMs} ms; command hooks: ${cmd.calls().map(label).join(' ')}`,
      );
      t.diagnostic(`http hooks: ${http.calls.map(label).join(' ')}; egress: ${JSON.stringify(r.egress)}`);
      assert.equal(r.exitCode, 0, r.stderr);
      const result = asArray(r.json)
        .map((m) => asRecord(m) ?? {})
        .find((m) => m.type === 'result');
      assert.equal(result?.result, 'All done.');
      assert.equal(repo.read('a.txt'), 'alpha\n');
      assert.equal(repo.read('b.txt'), 'beta\n');
      // UserPromptSubmit fires on every model turn (with an empty prompt after tool results);
      // SessionEnd does not fire in -p mode.
      const expected = [
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse(write_file)',
        'PostToolUse(write_file)',
        'UserPromptSubmit',
        'PreToolUse(run_shell_command)',
        'PostToolUse(run_shell_command)',
        'UserPromptSubmit',
        'Stop',
      ];
      assert.deepEqual(cmd.calls().map(label), expected);
      assert.deepEqual(
        http.calls.map(label),
        expected,
        'http hooks fire for the same events, SessionStart included',
      );
      const pre = cmd.calls()[2]!.payload;
      assert.deepEqual(pre.tool_input, { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' });
      assert.deepEqual(http.calls[2]!.payload.tool_input, pre.tool_input);
      assert.equal(http.calls[2]!.method, 'POST');
      assert.match(String(pre.transcript_path), /\.qwen\/projects\/.+\/chats\/.+\.jsonl$/);
      assert.deepEqual(r.unexpectedRequests, []);
      assert.deepEqual(r.egress, []);
    } finally {
      await http.close();
      cmd.cleanup();
      repo.cleanup();
    }
  });

  it('an http PreToolUse hook answering deny stops write_file; the model is told why', async (t) => {
    const repo = makeRepo();
    const cmd = commandHook();
    const http = await httpHook([
      { label: 'PreToolUse', tool: 'write_file', body: denyPreToolUse('no writes here') },
    ]);
    try {
      const r = await run(repo.dir, cmd, http);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(existsSync(join(repo.dir, 'a.txt')), false, 'the denied write must not happen');
      assert.equal(repo.read('b.txt'), 'beta\n', 'the shell call was not denied');
      const toolMessages = asArray(asRecord(r.requests.at(-1)?.body)?.messages)
        .map((m) => asRecord(m) ?? {})
        .filter((m) => m.role === 'tool');
      t.diagnostic(`tool message the model saw: ${JSON.stringify(toolMessages[0]?.content)}`);
      assert.match(JSON.stringify(toolMessages[0]?.content), /no writes here/);
      assert.ok(!cmd.calls().some((c) => label(c) === 'PostToolUse(write_file)'));
      assert.deepEqual(r.egress, []);
    } finally {
      await http.close();
      cmd.cleanup();
      repo.cleanup();
    }
  });
});
