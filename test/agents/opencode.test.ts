/**
 * The real OpenCode CLI against the scripted Chat Completions API: a recording plugin in its user
 * plugin folder sees a scripted write and bash call, and throwing from tool.execute.before really
 * stops the write.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type OpencodePlugin, opencodePlugin, type PluginCall } from './hooks.js';
import { ensureAgent } from './install.js';
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { type AgentRun, runAgent } from './runner.js';
import { leftovers } from './temp.js';

const LOG = '.local/share/opencode/log';

async function run(dir: string, plugin: OpencodePlugin): Promise<AgentRun> {
  return runAgent({
    agent: 'opencode',
    cwd: dir,
    prompt: 'Write a.txt, then b.txt with the shell.',
    script: [
      call('write', { filePath: join(dir, 'a.txt'), content: 'alpha\n' }),
      call('bash', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
      text('All done.'),
    ],
    files: plugin.files,
    collect: [LOG],
  });
}

function name(c: PluginCall): string {
  const input = asRecord(c.input);
  if (c.hook === 'event') return `event:${String(input?.type)}`;
  return `${c.hook}${typeof input?.tool === 'string' ? `(${input.tool})` : ''}`;
}

/**
 * OpenCode tries to install its plugin package into ~/.config/opencode from the npm registry on
 * every start (non-fatal when refused). That is the only egress allowed: CONNECT to port 443, with
 * OpenCode's own log naming the failed background install.
 */
function assertOnlyDependencyInstall(r: AgentRun): void {
  for (const attempt of r.egress)
    assert.match(`${attempt.method} ${attempt.target}`, /^CONNECT [a-z0-9.-]+:443$/);
  if (r.egress.length > 0) {
    const log = Object.entries(r.collected).find(([path]) => path.startsWith(LOG))?.[1] ?? '';
    assert.match(log, /background dependency install failed.*403 Forbidden/);
  }
}

describe('OpenCode (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('is installed at its pinned version', async () => {
    assert.equal((await ensureAgent('opencode')).version, '1.18.33');
  });

  it('its plugin sees a scripted write and bash call, and it talks to nothing but the model', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const plugin = opencodePlugin();
    try {
      const r = await run(repo.dir, plugin);
      const calls = plugin.calls();
      const hooks = calls.map(name).filter((n) => !n.startsWith('event:'));
      t.diagnostic(`exit ${r.exitCode} in ${r.durationMs} ms; plugin hooks: ${hooks.join(' ')}`);
      t.diagnostic(
        `events: ${[...new Set(calls.map(name).filter((n) => n.startsWith('event:')))].join(' ')}`,
      );
      t.diagnostic(`egress attempts: ${JSON.stringify(r.egress)}`);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(repo.read('a.txt'), 'alpha\n');
      assert.equal(repo.read('b.txt'), 'beta\n');
      const tools = hooks.filter((h) => h.startsWith('tool.execute'));
      assert.deepEqual(tools, [
        'tool.execute.before(write)',
        'tool.execute.after(write)',
        'tool.execute.before(bash)',
        'tool.execute.after(bash)',
      ]);
      assert.equal(hooks[0], 'plugin.init');
      assert.ok(hooks.includes('chat.message'));
      const before = calls.find((c) => name(c) === 'tool.execute.before(write)')!;
      assert.deepEqual(asRecord(before.output)?.args, {
        filePath: join(repo.dir, 'a.txt'),
        content: 'alpha\n',
      });
      assert.match(String(asRecord(before.input)?.sessionID), /^ses_/);
      const events = calls.map(name);
      assert.ok(
        events.includes('event:file.edited') && events.includes('event:session.idle'),
        events.join(' '),
      );
      // One title request without tools, then one request per step.
      assert.deepEqual(
        r.requests.map((q) => q.thread),
        ['side-call', 'main', 'main', 'main'],
      );
      assert.deepEqual(r.unexpectedRequests, []);
      assertOnlyDependencyInstall(r);
    } finally {
      plugin.cleanup();
      repo.cleanup();
    }
  });

  it('throwing from tool.execute.before stops the write; the model is told why', async (t) => {
    const repo = makeRepo();
    const plugin = opencodePlugin([{ hook: 'tool.execute.before', tool: 'write', throw: 'no writes here' }]);
    try {
      const r = await run(repo.dir, plugin);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(existsSync(join(repo.dir, 'a.txt')), false, 'the refused write must not happen');
      assert.equal(repo.read('b.txt'), 'beta\n', 'the bash call was not refused');
      const toolMessages = asArray(asRecord(r.requests.at(-1)?.body)?.messages)
        .map((m) => asRecord(m) ?? {})
        .filter((m) => m.role === 'tool');
      t.diagnostic(`tool message the model saw: ${JSON.stringify(toolMessages[0]?.content)}`);
      assert.match(JSON.stringify(toolMessages[0]?.content), /no writes here/);
      assert.ok(!plugin.calls().some((c) => name(c) === 'tool.execute.after(write)'));
      assertOnlyDependencyInstall(r);
    } finally {
      plugin.cleanup();
      repo.cleanup();
    }
  });
});
