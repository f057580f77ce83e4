/**
 * OpenCode subagents (its `task` tool), the real pinned CLI against a scripted model: what its
 * plugin hooks and its client report (the subagent runs in a child session that names its parent),
 * and, under `tally run` and with the installed plugin, the receipt's agent graph and rows Tally
 * builds from them — in one Tally session. A scripted thread plays the subagent's model; the
 * subagent is given a model of its own, so whose model is whose shows.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { opencodePlugin, type PluginCall } from './hooks.js';
import { call } from './model/script.js';
import { BETA, SUB, SUB_MODEL, SUBAGENT_SETTINGS, subagentScript, task } from './opencode-task.js';
import { makeRepo } from './repo.js';
import { type AgentRun, runAgent } from './runner.js';
import {
  allowing,
  asArray,
  asRecord,
  packageRecords,
  receiptOf,
  runSummary,
  type TallyProject,
  tallyProject,
  underTallyRun,
  verifiedUnderCertificate,
} from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => asRecord(v) ?? {};

/** A plugin call as `hook(tool)@session`, the session shown as "root" or "child". */
function label(c: PluginCall, names: Record<string, string>): string {
  const input = obj(c.input);
  if (c.hook === 'event') {
    const props = obj(input.properties);
    return `event:${String(input.type)}@${names[String(props.sessionID)] ?? '?'}`;
  }
  const tool = typeof input.tool === 'string' ? `(${input.tool})` : '';
  return `${c.hook}${tool}@${names[String(input.sessionID)] ?? '?'}`;
}

/** The task calls as OpenCode's own output reports them: the child session each ran, by prompt. */
function tasksRun(run: AgentRun): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const e of run.events ?? []) {
    const part = obj(obj(e).part);
    const state = obj(part.state);
    if (part.tool === 'task' && state.status === 'completed')
      out.set(String(obj(state.input).prompt), obj(state.metadata));
  }
  return out;
}

/** Rows of a receipt section by key, mapped to the agents that caused them. */
function rows(receipt: Json, section: string, key: string): Map<string, unknown> {
  return new Map(asArray(receipt[section]).map((r) => [String(obj(r)[key]), obj(r).agents]));
}

function sessionsOf(dir: string): string[] {
  return readdirSync(join(dir, '.tally', 'sessions')).filter((d) => d.startsWith('ses_'));
}

/**
 * The receipt's agent graph: the root (the session the user started: the one harness session
 * besides Tally's own) and its nodes by instance.
 */
function graphOf(receipt: Json) {
  const own = obj(receipt.session).id;
  const sessions = asArray(obj(receipt.session).harness_sessions).filter((s) => s !== own);
  assert.equal(sessions.length, 1, `one OpenCode session: ${JSON.stringify(sessions)}`);
  const agents = asArray(obj(receipt.agent_graph).agents).map(obj);
  const byInstance = (id: unknown) => agents.find((a) => a.instance === id);
  return { root: byInstance(sessions[0])!, byInstance, agents };
}

function assertSubagentNode(graph: ReturnType<typeof graphOf>, child: Json | undefined): void {
  assert.ok(child, JSON.stringify(graph.agents));
  assert.equal(child.parent, graph.root.id);
  assert.equal(child.parent_seen, true);
  assert.equal(child.name, 'general', 'the agent the task ran');
  assert.deepEqual(child.models, [{ model: SUB_MODEL, provider: 'scripted' }]);
}

async function closedReceipt(project: TallyProject, pkg: string) {
  await verifiedUnderCertificate(project, pkg);
  return receiptOf(project, pkg);
}

describe('OpenCode subagents (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('task: the subagent runs in a child session naming its parent; its hooks carry the child’s id', async (t) => {
    const repo = makeRepo();
    const plugin = opencodePlugin([], { sessions: true });
    try {
      const run = await runAgent({
        agent: 'opencode',
        cwd: repo.dir,
        prompt: 'Delegate the sub files to a subagent.',
        script: subagentScript(repo.dir, [{ calls: [task(SUB)] }]),
        settings: SUBAGENT_SETTINGS,
        files: plugin.files,
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('sub.txt'), 'from subagent\n');
      assert.equal(repo.read('sub2.txt'), 'two\n');
      const calls = plugin.calls();
      const created = calls.filter((c) => c.hook === 'event' && obj(c.input).type === 'session.created');
      assert.equal(created.length, 2);
      const [rootInfo, childInfo] = created.map((c) => obj(obj(obj(c.input).properties).info));
      const root = String(rootInfo!.id);
      const child = String(childInfo!.id);
      // The child session OpenCode creates for the task: its parent, the agent it runs, its title.
      assert.equal(rootInfo!.parentID, undefined);
      assert.equal(childInfo!.parentID, root);
      assert.equal(childInfo!.agent, 'general');
      assert.equal(childInfo!.title, 'Write sub files (@general subagent)');
      // A child session may not run tasks of its own (subagent depth 1).
      assert.ok(
        asArray(childInfo!.permission).some((p) => obj(p).permission === 'task' && obj(p).action === 'deny'),
      );
      const names = { [root]: 'root', [child]: 'child' };
      const seen = calls
        .map((c) => label(c, names))
        .filter((l) => /^(tool\.|chat\.message|event:session\.(created|idle))/.test(l));
      t.diagnostic(seen.join(' '));
      // The hooks in the order they ran; the session events (delivered on OpenCode's bus) where
      // they can be: the child's creation after the task began and before anything of the child,
      // its idle after its last call.
      assert.deepEqual(
        seen.filter((l) => !l.startsWith('event:')),
        [
          'chat.message@root',
          'tool.execute.before(task)@root',
          'chat.message@child',
          'tool.execute.before(write)@child',
          'tool.execute.after(write)@child',
          'tool.execute.before(bash)@child',
          'tool.execute.after(bash)@child',
          'tool.execute.after(task)@root',
        ],
      );
      const at = (l: string) => seen.indexOf(l);
      assert.ok(at('event:session.created@child') > at('tool.execute.before(task)@root'));
      assert.ok(at('event:session.created@child') < at('chat.message@child'));
      assert.ok(at('event:session.idle@child') > at('tool.execute.after(bash)@child'));
      assert.equal(seen.filter((l) => l.startsWith('event:')).length, 4, seen.join(' '));
      // What the plugin's client answers for each hook's session: parent, agent, model.
      for (const c of calls.filter((c) => c.hook.startsWith('tool.execute'))) {
        const info = obj(c.session);
        const ofChild = obj(c.input).sessionID === child;
        assert.equal(info.parentID, ofChild ? root : undefined);
        assert.equal(info.agent, ofChild ? 'general' : 'build');
        assert.deepEqual(obj(info.model), {
          id: ofChild ? SUB_MODEL : 'scripted-model',
          providerID: 'scripted',
          variant: 'default',
        });
      }
      // The child's chat.message names its agent and model; the model server saw that model asked.
      const childChat = calls.find((c) => c.hook === 'chat.message' && obj(c.input).sessionID === child);
      assert.equal(obj(childChat?.input).agent, 'general');
      assert.deepEqual(obj(childChat?.input).model, { providerID: 'scripted', modelID: SUB_MODEL });
      for (const q of run.requests.filter((r) => r.thread !== 'side-call'))
        assert.equal(obj(q.body).model, q.thread === 'main' ? 'scripted-model' : SUB_MODEL, q.thread);
      // The task's result names the child session and its model.
      const done = calls.find((c) => c.hook === 'tool.execute.after' && obj(c.input).tool === 'task')!;
      assert.deepEqual(obj(obj(done.output).metadata), {
        parentSessionId: root,
        sessionId: child,
        model: { providerID: 'scripted', modelID: SUB_MODEL },
        truncated: false,
      });
      assert.match(String(obj(done.output).output), new RegExp(`^<task id="${child}" state="completed">`));
    } finally {
      plugin.cleanup();
      repo.cleanup();
    }
  });

  it('tally run -- opencode: one session; the graph has the subagent under the session with its model; its rows name it', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, allowing('task'));
      const run = await runAgent({
        agent: 'opencode',
        cwd: repo.dir,
        prompt: 'Write main.txt, then delegate the sub files.',
        script: subagentScript(repo.dir, [
          call('bash', { command: 'echo main > main.txt', description: 'main' }),
          { calls: [task(SUB)] },
          call('write', { filePath: join(repo.dir, 'after.txt'), content: 'after\n' }),
        ]),
        settings: SUBAGENT_SETTINGS,
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('sub2.txt'), 'two\n');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      assert.deepEqual(sessionsOf(repo.dir), [summary.session]);
      const childId = tasksRun(run).get(SUB)?.sessionId;
      assert.match(String(childId), /^ses_/);
      const receipt = await closedReceipt(project, String(summary.package));
      const graph = graphOf(receipt);
      t.diagnostic(`agent_graph ${JSON.stringify(receipt.agent_graph)}`);
      const child = graph.byInstance(childId);
      assertSubagentNode(graph, child);
      assert.deepEqual(graph.root.children, [child!.id]);
      assert.deepEqual(graph.root.models, [{ model: 'scripted-model', provider: 'scripted' }]);
      const written = rows(receipt, 'files_written', 'path');
      const processes = rows(receipt, 'processes', 'command');
      t.diagnostic(
        `files_written ${JSON.stringify([...written])}; processes ${JSON.stringify([...processes])}`,
      );
      assert.deepEqual(written.get('sub.txt'), [child!.id]);
      assert.deepEqual(processes.get('echo two > sub2.txt'), [child!.id]);
      assert.deepEqual(processes.get('echo main > main.txt'), [graph.root.id]);
      assert.deepEqual(written.get('after.txt'), [graph.root.id], 'the parent again once its task returned');
      // The child session's start and end are its subagent's records; the task call names it.
      const records = packageRecords(String(summary.package));
      const ofChild = records.filter((r) => obj(r.agent).instance === childId).map((r) => obj(r.event).type);
      for (const type of ['dev.tally.agent.start', 'dev.tally.agent.stop', 'turn.start', 'tool.before'])
        assert.ok(ofChild.includes(type), `${type} in ${ofChild.join(' ')}`);
      const starts = records.filter(
        (r) => obj(r.event).type === 'session.start' && obj(r.event).source === 'urn:tally:opencode',
      );
      assert.deepEqual(
        starts.map((r) => obj(r.agent).instance),
        [graph.root.instance],
        'OpenCode’s session start: the session the user started, not the child’s',
      );
      const spawned = records
        .map((r) => obj(obj(obj(r.event).extensions)['dev.tally.native']).spawned)
        .filter((s) => s !== undefined);
      assert.deepEqual(spawned, [{ agent_id: childId, agent_name: 'general' }]);
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });

  it('installed plugin: two subagents running at once are told apart, in the one session the first event opened', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, allowing('task'));
      const installed = await project.tally(['install', 'opencode', '--agent', 'coder']);
      assert.equal(installed.code, 0, installed.stderr);
      const run = await runAgent({
        agent: 'opencode',
        cwd: repo.dir,
        prompt: 'Delegate both.',
        script: subagentScript(repo.dir, [{ calls: [task(SUB), task(BETA, 'Write beta')] }]),
        settings: SUBAGENT_SETTINGS,
        // The recorder started by the session's first event must outlive OpenCode's slow start.
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '120000' },
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(repo.read('beta.txt'), 'b\n');
      assert.equal(sessionsOf(repo.dir).length, 1, 'the subagents opened no session of their own');
      const closed = await project.tally(['session', 'close', '--json']);
      assert.equal(closed.code, 0, closed.stderr);
      const pkg = String(JSON.parse(closed.stdout).package);
      const receipt = await closedReceipt(project, pkg);
      const graph = graphOf(receipt);
      t.diagnostic(`agent_graph ${JSON.stringify(receipt.agent_graph)}`);
      const tasks = tasksRun(run);
      const alpha = graph.byInstance(tasks.get(SUB)?.sessionId);
      const beta = graph.byInstance(tasks.get(BETA)?.sessionId);
      assertSubagentNode(graph, alpha);
      assertSubagentNode(graph, beta);
      assert.deepEqual(graph.root.children, [alpha!.id, beta!.id].sort());
      const written = rows(receipt, 'files_written', 'path');
      const processes = rows(receipt, 'processes', 'command');
      assert.deepEqual(written.get('sub.txt'), [alpha!.id]);
      assert.deepEqual(processes.get('echo two > sub2.txt'), [alpha!.id]);
      assert.deepEqual(processes.get('echo b > beta.txt'), [beta!.id]);
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
