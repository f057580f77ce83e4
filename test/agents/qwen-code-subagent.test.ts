/**
 * Qwen Code subagents under `tally run`, the real pinned CLI against a scripted model: a nested spawn
 * (the session's agent spawns A through its `agent` tool, A spawns B) is the receipt's graph root →
 * A → B; every record of a subagent names the type its SubagentStart reported (Qwen's own tool
 * events name none), and each agent the model Qwen reported for it. Payloads and files of the same
 * run shape: fixtures/qwen-code/nested-subagent.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { nestedSubagentScript } from './capture-scenarios.js';
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

describe('Qwen Code subagents (real CLI)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('tally run -- qwen: a nested spawn is root → A → B, one name per subagent, each with its model', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, allowing('agent', 'write_file'));
      const run = await runAgent({
        agent: 'qwen-code',
        cwd: repo.dir,
        prompt: 'Delegate.',
        script: nestedSubagentScript(repo.dir, { spawn: 'agent', write: 'write_file' }),
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
        collect: ['.qwen/projects'],
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('grandchild.txt'), 'grandchild\n');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      const receipt = await receiptOf(project, String(summary.package));
      const graph = asRecord(receipt.agent_graph)!;
      t.diagnostic(`agent_graph ${JSON.stringify(graph)}`);
      const agents = asArray(graph.agents).map((a) => asRecord(a)!);
      const [session] = asArray(asRecord(receipt.session)?.harness_sessions);
      // The oracle: Qwen's own record of each subagent (its .meta.json: depth 0 is A, 1 is B).
      const metas = Object.entries(run.collected)
        .filter(([path]) => path.endsWith('.meta.json'))
        .map(([, text]) => JSON.parse(text) as Record<string, unknown>);
      const metaAt = (depth: number) => metas.find((m) => m.depth === depth)!;
      const [a, b] = [metaAt(0), metaAt(1)];
      assert.ok(a && b, JSON.stringify(metas));
      assert.equal(b.parentAgentId, a.agentId, "Qwen's own record: B was spawned by A");
      const root = agents.find((n) => n.instance === session)!;
      const nodeA = agents.find((n) => n.id === a.agentId)!;
      const nodeB = agents.find((n) => n.id === b.agentId)!;
      assert.ok(root && nodeA && nodeB, JSON.stringify(agents));
      assert.equal(nodeA.parent, root.id);
      assert.equal(nodeB.parent, nodeA.id, 'B is the child of A, not of the session');
      assert.deepEqual(nodeA.children, [nodeB.id]);
      assert.deepEqual([nodeA.name, nodeB.name], [a.agentType, b.agentType]);
      // The model Qwen ran each on (the scripted server's requests name it), no provider.
      const requested = [...new Set(run.requests.map((q) => asRecord(q.body)?.model))].map((model) => ({
        model,
      }));
      for (const node of [root, nodeA, nodeB]) assert.deepEqual(node.models, requested, String(node.id));
      const written = asArray(receipt.files_written).map((f) => asRecord(f)!);
      const writers = (path: string) => written.find((f) => f.path === path)?.agents;
      assert.deepEqual(writers('child.txt'), [nodeA.id]);
      assert.deepEqual(writers('grandchild.txt'), [nodeB.id]);
      // Every record of a subagent, its tool events included, names one type and one parent.
      const records = packageRecords(String(summary.package));
      for (const node of [nodeA, nodeB]) {
        const own = records.map((r) => asRecord(r.agent)).filter((x) => x?.instance === node.id);
        assert.ok(own.length >= 4, `${own.length} records of ${String(node.id)}`);
        assert.deepEqual(
          [...new Set(own.map((x) => `${String(x!.name)} < ${String(x!.parent)}`))],
          [`${String(node.name)} < ${String(node.parent)}`],
        );
      }
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
