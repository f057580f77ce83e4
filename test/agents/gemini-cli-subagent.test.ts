/**
 * Gemini CLI subagents (its `invoke_agent` tool), the real pinned CLI against a scripted model: what
 * its hooks report (nothing that names the subagent), what its own transcripts record (one per
 * subagent, beside the session's), and, under `tally run`, the receipt's agent graph and rows that
 * Tally builds from the two. A scripted thread plays the subagent's model; `complete_task` is how a
 * Gemini subagent hands back its result.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { commandHook } from './hooks.js';
import { call, calls, type ScriptInput, type Step, text } from './model/script.js';
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

const EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeModel', 'BeforeTool', 'AfterTool', 'AfterAgent'];
const SUB = 'SUBTASK-ALPHA: write sub.txt, then sub2.txt with the shell';
const BETA = 'SUBTASK-BETA: write beta.txt with the shell';

function invoke(prompt: string) {
  return { tool: 'invoke_agent', input: { agent_name: 'generalist', prompt } };
}

function done(response: string): Step {
  return call('complete_task', { result: { response } });
}

function script(dir: string, main: Step[]): ScriptInput {
  return {
    steps: [...main, text('Main done.')],
    threads: [
      {
        match: 'SUBTASK-ALPHA',
        steps: [
          call('write_file', { file_path: join(dir, 'sub.txt'), content: 'from subagent\n' }),
          call('run_shell_command', { command: 'echo two > sub2.txt', description: 'sub2' }),
          done('Sub done.'),
        ],
      },
      {
        match: 'SUBTASK-BETA',
        steps: [
          call('run_shell_command', { command: 'echo b > beta.txt', description: 'beta' }),
          done('Beta done.'),
        ],
      },
    ],
  };
}

function jsonl(text: string | undefined): Record<string, unknown>[] {
  return (text ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The transcripts a run left: the session's and each subagent's, by the agent id they carry. */
function transcripts(collected: Record<string, string>) {
  const subagents = new Map<string, Record<string, unknown>[]>();
  let main: Record<string, unknown>[] = [];
  for (const [path, text] of Object.entries(collected)) {
    if (!path.includes('/chats/') || !path.endsWith('.jsonl')) continue;
    const lines = jsonl(text);
    if (lines[0]?.kind === 'subagent') subagents.set(String(lines[0].sessionId), lines);
    else if (lines[0]?.kind === 'main') main = lines;
  }
  return { main, subagents };
}

/** A JSON value's text with object keys sorted (the record's input is canonical, the transcript's not). */
function sorted(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    asRecord(v) ? Object.fromEntries(Object.entries(asRecord(v)!).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

/** The tool calls a transcript records, with the names Gemini gave them. */
function toolCalls(lines: Record<string, unknown>[]): Record<string, unknown>[] {
  const byId = new Map<string, Record<string, unknown>>();
  for (const line of lines)
    for (const c of asArray(line.toolCalls)) byId.set(String(asRecord(c)?.id), asRecord(c)!);
  return [...byId.values()];
}

describe('Gemini CLI subagents (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it("invoke_agent: the subagent's tool hooks carry only the parent's session; its own transcript names it", async (t) => {
    const repo = makeRepo();
    const hook = commandHook();
    try {
      const hooks = Object.fromEntries(
        EVENTS.map((e) => [e, [{ matcher: '', hooks: [{ type: 'command', command: hook.command(e) }] }]]),
      );
      const run = await runAgent({
        agent: 'gemini-cli',
        cwd: repo.dir,
        prompt: 'Delegate the sub files to a subagent.',
        script: script(repo.dir, [{ calls: [invoke(SUB)] }]),
        settings: { hooks },
        collect: ['.gemini/tmp'],
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('sub.txt'), 'from subagent\n');
      assert.equal(repo.read('sub2.txt'), 'two\n');
      const all = hook.calls();
      t.diagnostic(
        `hooks: ${all.map((c) => `${c.label}${c.payload.tool_name ? `(${c.payload.tool_name})` : ''}`).join(' ')}`,
      );
      const tools = all.filter((c) => c.label === 'BeforeTool' || c.label === 'AfterTool');
      assert.deepEqual(
        tools.map((c) => `${c.label}(${String(c.payload.tool_name)})`),
        [
          'BeforeTool(invoke_agent)',
          'BeforeTool(write_file)',
          'AfterTool(write_file)',
          'BeforeTool(run_shell_command)',
          'AfterTool(run_shell_command)',
          'BeforeTool(complete_task)',
          'AfterTool(complete_task)',
          'AfterTool(invoke_agent)',
        ],
      );
      const [invoked] = tools.map((c) => c.payload);
      assert.deepEqual(invoked!.tool_input, { agent_name: 'generalist', prompt: SUB });
      // The subagent's own calls: the parent's session and transcript, and nothing else naming an agent.
      for (const c of tools.slice(1, -1)) {
        assert.equal(c.payload.session_id, invoked!.session_id);
        assert.equal(c.payload.transcript_path, invoked!.transcript_path);
        const keys = Object.keys(c.payload).sort();
        const expected = [
          'cwd',
          'hook_event_name',
          'session_id',
          'timestamp',
          'tool_input',
          'tool_name',
          'transcript_path',
        ];
        assert.deepEqual(keys, c.label === 'AfterTool' ? [...expected, 'tool_response'].sort() : expected);
      }
      // No turn of its own: one BeforeAgent and one AfterAgent, the parent's. Its model requests do
      // fire BeforeModel, under the parent's session too, told apart only by their content.
      assert.equal(all.filter((c) => c.label === 'BeforeAgent').length, 1);
      assert.equal(all.filter((c) => c.label === 'AfterAgent').length, 1);
      const subAsked = all.find(
        (c) =>
          c.label === 'BeforeModel' &&
          asRecord(asArray(asRecord(c.payload.llm_request)?.messages)[0])?.content === SUB,
      );
      assert.ok(subAsked, 'a BeforeModel for the subagent');
      assert.equal(subAsked.payload.session_id, invoked!.session_id);
      const subModel = asRecord(subAsked.payload.llm_request)!;
      // Gemini's own record: the subagent's transcript beside the session's, named by its agent id.
      const { main, subagents } = transcripts(run.collected);
      assert.equal(subagents.size, 1);
      const [[agentId, sub]] = [...subagents.entries()] as [[string, Record<string, unknown>[]]];
      const transcriptDir = String(invoked!.transcript_path).replace(/\/[^/]+$/, '');
      assert.ok(
        Object.keys(run.collected).some((p) =>
          p.endsWith(`/chats/${String(invoked!.session_id)}/${agentId}.jsonl`),
        ),
        `${transcriptDir}/<session_id>/<agent id>.jsonl`,
      );
      const started = Date.parse(String(sub[0]!.startTime));
      assert.ok(started >= Date.parse(String(invoked!.timestamp)), 'started after the parent’s BeforeTool');
      assert.ok(
        started <= Date.parse(String(tools[1]!.payload.timestamp)),
        'and before its first call’s BeforeTool',
      );
      assert.deepEqual(asArray(sub.find((l) => l.type === 'user')?.content), [{ text: SUB }]);
      assert.equal(sub.find((l) => l.type === 'gemini')?.model, subModel!.model);
      assert.deepEqual(
        toolCalls(sub).map((c) => c.name),
        ['write_file', 'run_shell_command', 'complete_task'],
      );
      const delegated = toolCalls(main).find((c) => c.name === 'invoke_agent');
      assert.equal(delegated?.agentId, agentId);
      const display = asRecord(asRecord(tools.at(-1)!.payload.tool_response)?.returnDisplay)!;
      assert.equal(display.agentName, 'generalist');
      assert.ok(
        asArray(display.recentActivity).every(
          (a) => !String(asRecord(a)?.id).includes('#') || String(asRecord(a)?.id).startsWith(`${agentId}#`),
        ),
      );
    } finally {
      hook.cleanup();
      repo.cleanup();
    }
  });

  it('tally run -- gemini: the receipt graph has the subagent under the session, with its model; its files and processes name it', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, allowing('invoke_agent', 'complete_task'));
      const run = await runAgent({
        agent: 'gemini-cli',
        cwd: repo.dir,
        prompt: 'Write main.txt, then delegate the sub files.',
        script: script(repo.dir, [
          call('run_shell_command', { command: 'echo main > main.txt', description: 'main' }),
          { calls: [invoke(SUB)] },
          call('write_file', { file_path: join(repo.dir, 'after.txt'), content: 'after\n' }),
        ]),
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
        collect: ['.gemini/tmp'],
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('sub2.txt'), 'two\n');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      const { main, subagents } = transcripts(run.collected);
      const [[agentId, sub]] = [...subagents.entries()] as [[string, Record<string, unknown>[]]];
      const receipt = await receiptOf(project, String(summary.package));
      const graph = asRecord(receipt.agent_graph)!;
      t.diagnostic(`agent_graph ${JSON.stringify(graph)}`);
      const agents = asArray(graph.agents).map((a) => asRecord(a)!);
      const [sessionId] = asArray(asRecord(receipt.session)?.harness_sessions);
      const root = agents.find((a) => a.instance === sessionId)!;
      const child = agents.find((a) => a.instance === agentId);
      assert.ok(child, `a node for ${agentId}: ${JSON.stringify(agents)}`);
      assert.equal(child.parent, root.id);
      assert.equal(child.parent_seen, true);
      assert.deepEqual(root.children, [child.id]);
      assert.equal(child.name, 'generalist', 'the agent_name it was invoked with');
      // Models: each agent's, as its own transcript names them.
      const modelsOf = (lines: Record<string, unknown>[]) =>
        [...new Set(lines.filter((l) => l.type === 'gemini' && l.model).map((l) => String(l.model)))].sort();
      assert.deepEqual(
        asArray(child.models).map((m) => asRecord(m)?.model),
        modelsOf(sub),
      );
      assert.ok(asArray(root.models).length > 0, 'the session’s model');
      for (const m of asArray(root.models)) assert.ok(modelsOf(main).includes(String(asRecord(m)?.model)));
      // Rows name the agent instance that caused them.
      const written = new Map(
        asArray(receipt.files_written).map((f) => [String(asRecord(f)?.path), asRecord(f)?.agents]),
      );
      const processes = new Map(
        asArray(receipt.processes).map((p) => [String(asRecord(p)?.command), asRecord(p)?.agents]),
      );
      t.diagnostic(
        `files_written ${JSON.stringify([...written])}; processes ${JSON.stringify([...processes])}`,
      );
      assert.deepEqual(written.get('sub.txt'), [child.id]);
      assert.deepEqual(processes.get('echo two > sub2.txt'), [child.id]);
      assert.deepEqual(processes.get('echo main > main.txt'), [root.id]);
      assert.deepEqual(written.get('after.txt'), [root.id], 'the parent again once its subagent returned');
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });

  it('two subagents in one turn run at once: each call names its subagent, or the session with both as candidates', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, allowing('invoke_agent', 'complete_task'));
      const run = await runAgent({
        agent: 'gemini-cli',
        cwd: repo.dir,
        prompt: 'Delegate both.',
        script: script(repo.dir, [calls(invoke(SUB), invoke(BETA))]),
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
        collect: ['.gemini/tmp'],
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('beta.txt'), 'b\n');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      const { subagents } = transcripts(run.collected);
      assert.equal(subagents.size, 2);
      // The oracle: the call appears in exactly one subagent's own transcript.
      const ownerOf = new Map<string, string>();
      for (const [id, lines] of subagents) for (const c of toolCalls(lines)) ownerOf.set(sorted(c.args), id);
      const records = packageRecords(String(summary.package)).filter(
        (r) =>
          asRecord(r.event)?.type === 'tool.before' &&
          asRecord(asRecord(r.event)?.tool)?.name !== 'invoke_agent',
      );
      assert.ok(records.length >= 4);
      const seen: string[] = [];
      for (const r of records) {
        const event = asRecord(r.event)!;
        const owner = ownerOf.get(sorted(asRecord(event.tool)?.input));
        assert.ok(owner, `the call is in a subagent transcript: ${JSON.stringify(event.tool)}`);
        const instance = asRecord(r.agent)?.instance;
        const candidates = asRecord(asRecord(event.extensions)?.['dev.tally.native'])?.subagent_candidates;
        if (instance === owner) seen.push('own');
        else {
          assert.ok(
            asArray(candidates).includes(owner),
            `${String(instance)} with candidates ${JSON.stringify(candidates)}`,
          );
          assert.equal(asRecord(r.agent)?.parent, undefined, 'an undecided call stays the session’s');
          seen.push('candidates');
        }
      }
      t.diagnostic(`attributions: ${seen.join(' ')}`);
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
