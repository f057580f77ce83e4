/**
 * Codex subagents, the real pinned CLI against a scripted model: what its hooks report when the
 * model spawns an agent (multi-agent v1, on by default behind the deferred `multi_agent_v1` tool
 * namespace; and v2, `[features] multi_agent_v2`, its `collaboration` namespace), and, under `tally
 * run`, the receipt's agent graph and rows. A scripted thread plays the subagent's model; the parent
 * waits for it (`wait_agent`), so nothing depends on timing.
 */
import assert from 'node:assert/strict';
import { relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CommandHook, commandHook } from './hooks.js';
import { call, namespacedCall, type ScriptInput, type Step, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  allowing,
  packageRecords,
  receiptOf,
  runSummary,
  tallyProject,
  underTallyRun,
} from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'SubagentStart',
  'SubagentStop',
  'Stop',
];
const SUB = 'SUBTASK-ALPHA: write sub.txt with the shell';

function hooksFile(hook: CommandHook): Record<string, string> {
  const hooks = Object.fromEntries(
    EVENTS.map((e) => [e, [{ matcher: '', hooks: [{ type: 'command', command: hook.command(e) }] }]]),
  );
  return { '.codex/hooks.json': JSON.stringify({ hooks }) };
}

/** The agent id v1's spawn_agent answered with, from the conversation the parent sends next. */
function spawnedId(request: Record<string, unknown>): string {
  for (const item of asArray(request.input)) {
    const output = asRecord(item)?.output;
    if (typeof output !== 'string' || !output.includes('"agent_id"')) continue;
    return String((JSON.parse(output) as { agent_id: unknown }).agent_id);
  }
  return 'unknown';
}

const CHILD = (dir: string) => ({
  match: 'SUBTASK-ALPHA',
  steps: [call('exec_command', { cmd: 'echo sub > sub.txt', workdir: dir }), text('Sub done.')],
});

/** v1: spawn_agent {message} → {agent_id, nickname}; wait_agent needs the ids. */
function v1Script(dir: string): ScriptInput {
  return {
    steps: [
      namespacedCall('multi_agent_v1', 'spawn_agent', { message: SUB }),
      namespacedCall('multi_agent_v1', 'wait_agent', (req) => ({
        targets: [spawnedId(req)],
        timeout_ms: 60000,
      })),
      text('Main done.'),
    ],
    threads: [CHILD(dir)],
  };
}

/** v2: spawn_agent {task_name, message} → {task_name}; wait_agent waits for any. */
function v2Script(dir: string, before: Step[] = []): ScriptInput {
  return {
    steps: [
      ...before,
      namespacedCall('collaboration', 'spawn_agent', {
        task_name: 'sub_task',
        message: SUB,
        fork_turns: 'none',
      }),
      namespacedCall('collaboration', 'wait_agent', { timeout_ms: 60000 }),
      text('Main done.'),
    ],
    threads: [CHILD(dir)],
  };
}

function firstLine(jsonl: string | undefined): Record<string, unknown> {
  return JSON.parse((jsonl ?? '{}').split('\n')[0]!) as Record<string, unknown>;
}

describe('Codex subagents (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  for (const version of ['v1', 'v2'] as const) {
    it(`multi-agent ${version}: the subagent's hooks carry the parent's session_id with its own agent_id, type and transcript`, async (t) => {
      const repo = makeRepo();
      const hook = commandHook();
      try {
        const run = await runAgent({
          agent: 'codex',
          cwd: repo.dir,
          prompt: 'Delegate the sub file to a subagent.',
          script: version === 'v1' ? v1Script(repo.dir) : v2Script(repo.dir),
          files: hooksFile(hook),
          trustHooks: true,
          ...(version === 'v2' ? { settings: { features: { multi_agent_v2: true } } } : {}),
          collect: ['.codex/sessions'],
        });
        assert.equal(run.exitCode, 0, run.stderr);
        assert.equal(repo.read('sub.txt'), 'sub\n');
        const calls = hook.calls();
        t.diagnostic(
          `hooks: ${calls.map((c) => `${c.label}${c.payload.tool_name ? `(${c.payload.tool_name})` : ''}`).join(' ')}`,
        );
        const spawnName = version === 'v1' ? 'spawn_agent' : 'collaborationspawn_agent';
        // As Codex names them: v1's spawn without its namespace, its wait with it; v2's both with it.
        const waitName = version === 'v1' ? 'multi_agent_v1wait_agent' : 'collaborationwait_agent';
        const start = calls.find((c) => c.label === 'SubagentStart')!.payload;
        const stop = calls.find((c) => c.label === 'SubagentStop')!.payload;
        const main = calls.find((c) => c.label === 'SessionStart')!.payload;
        // The parent's calls name no agent; the subagent's name it, under the parent's session.
        const tools = calls
          .filter((c) => c.label === 'PreToolUse' || c.label === 'PostToolUse')
          .map((c) => [c.label, c.payload.tool_name, c.payload.agent_id ?? null]);
        assert.deepEqual(
          tools.filter(([, , agent]) => agent === null).map(([l, n]) => `${l}(${n})`),
          [
            `PreToolUse(${spawnName})`,
            `PostToolUse(${spawnName})`,
            `PreToolUse(${waitName})`,
            `PostToolUse(${waitName})`,
          ],
        );
        assert.deepEqual(
          tools.filter(([, , agent]) => agent !== null),
          [
            ['PreToolUse', 'Bash', start.agent_id],
            ['PostToolUse', 'Bash', start.agent_id],
          ],
        );
        for (const c of calls)
          assert.equal(c.payload.session_id, main.session_id, `${c.label}: the parent's session`);
        assert.equal(start.agent_type, 'default');
        assert.equal(stop.agent_id, start.agent_id);
        assert.equal(stop.last_assistant_message, 'Sub done.');
        assert.equal(calls.filter((c) => c.label === 'SessionStart').length, 1, 'no SessionStart of its own');
        assert.equal(calls.filter((c) => c.label === 'Stop').length, 1, 'SubagentStop instead of a Stop');
        // v1 also opens the child's turn with a UserPromptSubmit of its own: its task as the prompt.
        const prompts = calls.filter((c) => c.label === 'UserPromptSubmit').map((c) => c.payload);
        assert.deepEqual(
          prompts.map((p) => [p.agent_id ?? null, p.prompt]),
          version === 'v1'
            ? [
                [null, 'Delegate the sub file to a subagent.'],
                [start.agent_id, SUB],
              ]
            : [[null, 'Delegate the sub file to a subagent.']],
        );
        // Every payload names the model; the subagent's tool hooks point at its own rollout.
        for (const c of calls) assert.equal(c.payload.model, 'gpt-5.5', c.label);
        const subPre = calls.find(
          (c) => c.payload.agent_id !== undefined && c.label === 'PreToolUse',
        )!.payload;
        assert.equal(subPre.transcript_path, start.transcript_path);
        assert.equal(stop.agent_transcript_path, start.transcript_path);
        assert.equal(stop.transcript_path, main.transcript_path);
        assert.notEqual(start.transcript_path, main.transcript_path);
        // The spawn's answer: v1 names the new thread, v2 only its task path.
        const spawnPost = calls.find((c) => c.label === 'PostToolUse' && c.payload.tool_name === spawnName)!;
        const answer = JSON.parse(String(spawnPost.payload.tool_response)) as Record<string, unknown>;
        if (version === 'v1') assert.equal(answer.agent_id, start.agent_id);
        else assert.deepEqual(answer, { task_name: '/root/sub_task' });
        // The subagent's rollout names its parent thread and the provider; it gets no spawn tools.
        const meta = asRecord(
          firstLine(run.collected[relative(run.home, String(start.transcript_path))]).payload,
        )!;
        assert.equal(meta.id, start.agent_id);
        assert.equal(meta.parent_thread_id, main.session_id);
        assert.equal(meta.thread_source, 'subagent');
        assert.equal(meta.model_provider, 'scripted');
        const spawnTool = version === 'v1' ? 'spawn_agent' : 'collaboration';
        const offered = (thread: string) =>
          asArray(asRecord(run.requests.find((q) => q.thread === thread)?.body)?.tools).map(
            (x) => asRecord(x)?.name,
          );
        if (version === 'v2') assert.ok(offered('main').includes(spawnTool));
        assert.ok(
          !offered('SUBTASK-ALPHA').includes(spawnTool),
          'a depth-1 subagent is offered no spawn tool',
        );
      } finally {
        hook.cleanup();
        repo.cleanup();
      }
    });
  }

  it('tally run -- codex: the receipt graph has the subagent under the session, with its model, and its rows name it', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(
        repo.dir,
        home,
        allowing('collaborationspawn_agent', 'collaborationwait_agent'),
      );
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Write main.txt, then delegate sub.txt.',
        script: v2Script(repo.dir, [
          call('exec_command', { cmd: 'echo main > main.txt', workdir: repo.dir }),
        ]),
        settings: { features: { multi_agent_v2: true } },
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('sub.txt'), 'sub\n');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      const receipt = await receiptOf(project, String(summary.package));
      const graph = asRecord(receipt.agent_graph)!;
      const agents = asArray(graph.agents).map((a) => asRecord(a)!);
      t.diagnostic(`agent_graph ${JSON.stringify(graph)}`);
      const records = packageRecords(String(summary.package));
      // The root is Codex's session thread (beside it, the `tally run` start under the certificate's
      // name); the child is the thread it spawned, both as Codex named them.
      const [thread] = asArray(asRecord(receipt.session)?.harness_sessions);
      const root = agents.find((a) => a.instance === thread)!;
      const children = agents.filter((a) => a.parent !== undefined);
      assert.equal(children.length, 1, JSON.stringify(agents));
      const child = children[0]!;
      assert.ok((graph.roots as unknown[]).includes(root.id));
      assert.equal(root.name, 'coder');
      assert.equal(child.parent, root.id);
      assert.equal(child.parent_seen, true);
      assert.deepEqual(root.children, [child.id]);
      assert.equal(child.name, 'default', 'the agent_type Codex reported');
      assert.equal(child.instance, child.id);
      // The model from the hooks, the provider from each thread's rollout: the `[model_providers.*]`
      // entry this test's config.toml names (its session_meta, asserted above).
      assert.deepEqual(child.models, [{ model: 'gpt-5.5', provider: 'scripted' }]);
      assert.deepEqual(root.models, [{ model: 'gpt-5.5', provider: 'scripted' }]);
      // The subagent's start and stop are its own records.
      const childTypes = records
        .filter((r) => asRecord(r.agent)?.instance === child.id)
        .map((r) => String(asRecord(r.event)?.type));
      assert.deepEqual(
        childTypes.filter((ty) => ty.startsWith('dev.tally.agent.')),
        ['dev.tally.agent.start', 'dev.tally.agent.stop'],
      );
      // Each process row names the agent that ran it.
      const processes = asArray(receipt.processes).map((p) => asRecord(p)!);
      t.diagnostic(`processes ${JSON.stringify(processes)}`);
      const agentsOf = (command: string) => processes.find((p) => p.command === command)?.agents;
      assert.deepEqual(agentsOf('echo sub > sub.txt'), [child.id]);
      assert.deepEqual(agentsOf('echo main > main.txt'), [root.id]);
      // The spawn call is the parent's: its tool.after names the task it started.
      const spawn = records.find(
        (r) =>
          asRecord(r.event)?.type === 'tool.after' &&
          asRecord(asRecord(r.event)?.tool)?.name === 'collaborationspawn_agent',
      );
      assert.equal(asRecord(spawn?.agent)?.instance, root.id);
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
