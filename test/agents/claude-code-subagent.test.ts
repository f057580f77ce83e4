/**
 * Claude Code subagents (the Agent tool): the subagent's own tool calls reach the hooks under the
 * parent's session, and its transcript is stored beside the parent's. A scripted thread plays the
 * subagent's model. Under `tally run`, a nested spawn (the session's agent spawns A, A spawns B) is
 * the receipt's graph root → A → B, each agent with the model its transcript names.
 */
import assert from 'node:assert/strict';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { nestedSubagentScript } from './capture-scenarios.js';
import { commandHook } from './hooks.js';
import { call, text } from './model/script.js';
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

  it('tally run -- claude: a nested spawn is root → A → B in the receipt, each with its model, rows naming the right agent', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, allowing('Agent'));
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Delegate.',
        // Headless Claude Code runs a tool only when a hook allows it: the certificate does.
        permissive: false,
        script: nestedSubagentScript(repo.dir, { spawn: 'Agent', write: 'Write', modelB: 'haiku' }),
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
        collect: ['.claude/projects'],
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('child.txt'), 'child\n');
      assert.equal(repo.read('grandchild.txt'), 'grandchild\n');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      const receipt = await receiptOf(project, String(summary.package));
      const graph = asRecord(receipt.agent_graph)!;
      t.diagnostic(`agent_graph ${JSON.stringify(graph)}`);
      const agents = asArray(graph.agents).map((a) => asRecord(a)!);
      const [session] = asArray(asRecord(receipt.session)?.harness_sessions);
      // The oracle: what the real CLI wrote — each subagent's .meta.json (its spawn depth) and each
      // transcript's assistant lines (the model the API answered with).
      const files = Object.entries(run.collected);
      const metaOf = (depth: number) => {
        const found = files.find(
          ([path, text]) => path.endsWith('.meta.json') && JSON.parse(text).spawnDepth === depth,
        );
        assert.ok(found, `a .meta.json of depth ${depth}: ${files.map(([p]) => p).join(', ')}`);
        return { id: /agent-([^/]+)\.meta\.json$/.exec(found[0])![1]!, meta: JSON.parse(found[1]) };
      };
      const modelsIn = (suffix: string) => {
        const [, text] = files.find(([path]) => path.endsWith(suffix))!;
        const names = text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .filter((l) => l.type === 'assistant')
          .map((l) => l.message.model as string);
        return [...new Set(names)].map((model) => ({ model }));
      };
      const a = metaOf(1);
      const b = metaOf(2);
      assert.equal(b.meta.parentAgentId, a.id, "Claude Code's own record: B was spawned by A");
      const root = agents.find((n) => n.instance === session)!;
      const nodeA = agents.find((n) => n.id === a.id)!;
      const nodeB = agents.find((n) => n.id === b.id)!;
      assert.ok(root && nodeA && nodeB, JSON.stringify(agents));
      assert.equal(nodeA.parent, root.id);
      assert.equal(nodeB.parent, nodeA.id, 'B is the child of A, not of the session');
      assert.deepEqual(root.children, [nodeA.id]);
      assert.deepEqual(nodeA.children, [nodeB.id]);
      assert.equal(nodeB.parent_seen, true);
      assert.ok((graph.roots as unknown[]).includes(root.id));
      assert.ok(!(graph.roots as unknown[]).includes(nodeB.id));
      assert.deepEqual([nodeA.name, nodeB.name], ['general-purpose', 'general-purpose']);
      // Each agent's models: what its own transcript names (B was asked for haiku; A and the
      // session's agent run the default), none of them empty.
      assert.deepEqual(nodeB.models, modelsIn(`agent-${b.id}.jsonl`));
      assert.deepEqual(nodeA.models, modelsIn(`agent-${a.id}.jsonl`));
      assert.deepEqual(root.models, modelsIn(`${session}.jsonl`));
      assert.notDeepEqual(nodeB.models, nodeA.models);
      // The rows name the agent that wrote each file, and every record of one instance names one
      // parent and one type.
      const written = asArray(receipt.files_written).map((f) => asRecord(f)!);
      t.diagnostic(`files_written ${JSON.stringify(written)}`);
      const writers = (path: string) => written.find((f) => f.path === path)?.agents;
      assert.deepEqual(writers('child.txt'), [nodeA.id]);
      assert.deepEqual(writers('grandchild.txt'), [nodeB.id]);
      const records = packageRecords(String(summary.package));
      for (const node of [nodeA, nodeB]) {
        const own = records.map((r) => asRecord(r.agent)).filter((x) => x?.instance === node.id);
        assert.deepEqual(
          [...new Set(own.map((x) => `${String(x!.name)} < ${String(x!.parent)}`))],
          [`general-purpose < ${String(node.parent)}`],
        );
      }
      // A's spawn of B is A's own call.
      const spawnOfB = records.find(
        (r) =>
          asRecord(r.event)?.type === 'tool.before' &&
          asRecord(asRecord(r.event)?.tool)?.name === 'Agent' &&
          String(asRecord(asRecord(asRecord(r.event)?.tool)?.input)?.prompt).startsWith('SUBTASK-BETA'),
      );
      assert.equal(asRecord(spawnOfB?.agent)?.instance, nodeA.id);
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
