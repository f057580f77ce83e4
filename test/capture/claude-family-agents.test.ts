/**
 * Who spawned each subagent, and the model each agent ran on, in the Claude Code and Qwen Code
 * adapters — on the payloads and files the pinned CLIs wrote for a nested spawn (the main agent
 * spawns A, A writes child.txt and spawns B, B writes grandchild.txt; the fixtures `<agent>/nested-subagent`,
 * captured by test/agents/capture.ts). Each replay copies the harness's files into a temp HOME and
 * gives the session a fresh id, so the adapters' state starts empty; the files appear when the real
 * CLI wrote them (Claude Code: a subagent's `.meta.json` by its first tool call, its transcript by
 * its first tool result), all at once, or never.
 */
import assert from 'node:assert/strict';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { translateClaudeCode } from '../../src/capture/claude-code/translate.js';
import { translateQwenCode } from '../../src/capture/qwen-code/translate.js';
import type { Captured } from '../../src/capture/types.js';

const FIXTURES = new URL('../../../test/agents/fixtures/', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'tally-family-agents-'));
after(() => rmSync(root, { recursive: true, force: true }));

type Files = 'as-written' | 'all' | 'none';
let replays = 0;

interface Step {
  payload: Record<string, unknown>;
  captured: Captured;
}

/**
 * Replays a fixture's command-hook payloads in the order the CLI sent them. `written(payload)` names
 * the fixture files (relative to files/) that exist by the time that payload is sent.
 */
function replay(
  fixture: string,
  translate: (payload: unknown) => Captured,
  files: Files,
  written: (payload: Record<string, unknown>, seen: Record<string, unknown>[]) => string[] = () => [],
): { steps: Step[]; fresh: string } {
  const dir = join(FIXTURES, fixture);
  const order = (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { hookOrder: string[] })
    .hookOrder;
  const home = join(root, `home-${++replays}`);
  const bodies = order
    .filter((name) => name.startsWith('cmd-'))
    .map(
      (name) => (JSON.parse(readFileSync(join(dir, name), 'utf8')) as { body: Record<string, unknown> }).body,
    );
  const session = String(bodies[0]!.session_id);
  const fresh = `${session.slice(0, -4)}${String(replays).padStart(4, '0')}`;
  const rewrite = (text: string) => text.split('/home/user').join(home).split(session).join(fresh);
  const copy = (rel: string) => {
    const to = rewrite(join('/home/user', rel));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(dir, 'files', rel), to);
  };
  if (files === 'all')
    for (const rel of readdirSync(join(dir, 'files'), { recursive: true, encoding: 'utf8' }))
      if (statSync(join(dir, 'files', rel)).isFile()) copy(rel);
  const steps: Step[] = [];
  const seen: Record<string, unknown>[] = [];
  for (const body of bodies) {
    if (files === 'as-written') for (const rel of written(body, seen)) copy(rel);
    seen.push(body);
    const payload = JSON.parse(rewrite(JSON.stringify(body))) as Record<string, unknown>;
    steps.push({ payload, captured: translate(payload) });
  }
  return { steps, fresh };
}

/** `[event(tool), instance, parent, type, model]` of each step, with the session's ids named. */
function rows(steps: Step[], names: Record<string, string>) {
  const name = (id: string | undefined) => (id === undefined ? null : (names[id] ?? id));
  return steps.map(({ payload, captured }) => [
    `${String(payload.hook_event_name)}${payload.tool_name ? `(${String(payload.tool_name)})` : ''}`,
    name(captured.agent.instance),
    name(captured.agent.parent),
    captured.agent.type ?? null,
    (captured.event.session as { model?: string }).model ?? null,
  ]);
}

const CLAUDE = 'claude-code/nested-subagent';
const claudeIds = (() => {
  const start = (n: number) =>
    (
      JSON.parse(readFileSync(join(FIXTURES, CLAUDE, `cmd-SubagentStart-${n}.json`), 'utf8')) as {
        body: { agent_id: string; session_id: string };
      }
    ).body;
  return { A: start(1).agent_id, B: start(2).agent_id, session: start(1).session_id };
})();

/** Where the pinned Claude Code keeps a session's files, relative to HOME (test/agents/README.md). */
function claudeFiles() {
  const base = `.claude/projects/-home-user-project/${claudeIds.session}`;
  return {
    main: `${base}.jsonl`,
    meta: (agent: string) => `${base}/subagents/agent-${agent}.meta.json`,
    transcript: (agent: string) => `${base}/subagents/agent-${agent}.jsonl`,
  };
}

describe('Claude Code: nested subagents and models, from what the pinned CLI reports', () => {
  // What the real CLI wrote, in the fixture: the models its transcripts name.
  const MAIN = 'claude-opus-5-5';
  const A = 'claude-opus-5-5';
  const B = 'claude-haiku-5-5';

  it('B is the child of A, not of the session; each agent names the model its transcript reports', () => {
    const { steps, fresh } = replay(CLAUDE, translateClaudeCode, 'as-written', (payload, seen) => {
      const f = claudeFiles();
      const agent = payload.agent_id as string | undefined;
      const firstOf = (event: string) =>
        !seen.some((s) => s.hook_event_name === event && s.agent_id === agent);
      const out: string[] = [];
      // As measured: the main transcript exists by the first tool call; a subagent's .meta.json by
      // its first PreToolUse, its transcript by its first PostToolUse.
      if (payload.hook_event_name === 'PreToolUse') out.push(f.main);
      if (agent && payload.hook_event_name === 'PreToolUse' && firstOf('PreToolUse')) out.push(f.meta(agent));
      if (agent && payload.hook_event_name === 'PostToolUse' && firstOf('PostToolUse'))
        out.push(f.transcript(agent));
      return out;
    });
    assert.deepEqual(rows(steps, { [fresh]: 'session', [claudeIds.A]: 'A', [claudeIds.B]: 'B' }), [
      ['SessionStart', 'session', null, null, null],
      ['UserPromptSubmit', 'session', null, null, null],
      ['PreToolUse(Agent)', 'session', null, null, MAIN],
      ['SubagentStart', 'A', 'session', 'general-purpose', null],
      ['PreToolUse(Write)', 'A', 'session', 'general-purpose', null],
      ['PostToolUse(Write)', 'A', 'session', 'general-purpose', A],
      ['PreToolUse(Agent)', 'A', 'session', 'general-purpose', A],
      ['SubagentStart', 'B', 'A', 'general-purpose', null],
      ['PreToolUse(Write)', 'B', 'A', 'general-purpose', null],
      ['PostToolUse(Write)', 'B', 'A', 'general-purpose', B],
      ['SubagentStop', 'B', 'A', 'general-purpose', B],
      ['PostToolUse(Agent)', 'A', 'session', 'general-purpose', A],
      ['SubagentStop', 'A', 'session', 'general-purpose', A],
      ['PostToolUse(Agent)', 'session', null, null, MAIN],
      ['Stop', 'session', null, null, MAIN],
      ['SessionEnd', 'session', null, null, MAIN],
    ]);
    const from = steps
      .filter((s) => s.captured.agent.parent !== undefined)
      .map(
        (s) =>
          (s.captured.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.native']!
            .parent_from,
      );
    // SubagentStart comes before the harness writes .meta.json: the spawn order says who, then the file.
    assert.deepEqual(from, [
      'spawn-order',
      'subagent-meta',
      'subagent-meta',
      'subagent-meta',
      'spawn-order',
      'subagent-meta',
      'subagent-meta',
      'subagent-meta',
      'subagent-meta',
      'subagent-meta',
    ]);
    for (const { captured } of steps) {
      const agent = (captured.event.session as { agent: { id: string; type: string } }).agent;
      assert.equal(agent.id, captured.agent.instance);
      assert.equal(agent.type, captured.agent.type ?? 'primary');
    }
  });

  it('with every file there from the start, each subagent event is placed by its .meta.json', () => {
    const { steps, fresh } = replay(CLAUDE, translateClaudeCode, 'all');
    const table = rows(steps, { [fresh]: 'session', [claudeIds.A]: 'A', [claudeIds.B]: 'B' });
    assert.deepEqual(
      table.filter((r) => r[1] === 'B').map((r) => [r[2], r[4]]),
      [
        ['A', B],
        ['A', B],
        ['A', B],
        ['A', B],
      ],
    );
    assert.ok(table.filter((r) => r[1] === 'A').every((r) => r[2] === 'session' && r[4] === A));
  });

  it("with none of the harness's files, the spawn calls alone still place B under A (no model is invented)", () => {
    const { steps, fresh } = replay(CLAUDE, translateClaudeCode, 'none');
    const table = rows(steps, { [fresh]: 'session', [claudeIds.A]: 'A', [claudeIds.B]: 'B' });
    assert.deepEqual(
      [...new Set(table.filter((r) => r[2] !== null).map((r) => `${r[1]}<${r[2]}`))],
      ['A<session', 'B<A'],
    );
    assert.ok(table.every((r) => r[4] === null));
  });
});

describe('Qwen Code: one name per subagent, nested parents and models', () => {
  const QWEN = 'qwen-code/nested-subagent';
  const A = 'general-purpose-call_m_0_0';
  const B = 'general-purpose-call_t14y8zn9_1_0';

  for (const files of ['all', 'none'] as const) {
    it(`a subagent's tool events carry the type its SubagentStart named (${files === 'all' ? 'with' : 'without'} Qwen's files)`, () => {
      const { steps, fresh } = replay(QWEN, translateQwenCode, files);
      const table = rows(steps, { [fresh]: 'session', [A]: 'A', [B]: 'B' });
      const model = files === 'all' ? 'scripted-model' : null;
      assert.deepEqual(table, [
        ['SessionStart', 'session', null, null, 'scripted-model'],
        ['UserPromptSubmit', 'session', null, null, model],
        ['PreToolUse(agent)', 'session', null, null, model],
        ['SubagentStart', 'A', 'session', 'general-purpose', model],
        ['PreToolUse(write_file)', 'A', 'session', 'general-purpose', model],
        ['PostToolUse(write_file)', 'A', 'session', 'general-purpose', model],
        ['PreToolUse(agent)', 'A', 'session', 'general-purpose', model],
        ['SubagentStart', 'B', 'A', 'general-purpose', model],
        ['PreToolUse(write_file)', 'B', 'A', 'general-purpose', model],
        ['PostToolUse(write_file)', 'B', 'A', 'general-purpose', model],
        ['SubagentStop', 'B', 'A', 'general-purpose', model],
        ['PostToolUse(agent)', 'A', 'session', 'general-purpose', model],
        ['SubagentStop', 'A', 'session', 'general-purpose', model],
        ['PostToolUse(agent)', 'session', null, null, model],
        ['UserPromptSubmit', 'session', null, null, model],
        ['Stop', 'session', null, null, model],
      ]);
      // Qwen names no provider (its auth_type is the kind of API, not who serves it).
      for (const { captured } of steps)
        assert.equal((captured.event.extensions as Record<string, unknown>)['dev.tally.model'], undefined);
    });
  }
});

describe('what a subagent cannot make the adapter read or believe', () => {
  it('an agent id that is a path reads no file; a .meta.json naming another agent, or the agent itself as parent, places nothing', () => {
    const home = join(root, 'forged');
    const base = join(home, 'session-x');
    mkdirSync(join(base, 'subagents'), { recursive: true });
    const transcript = `${base}.jsonl`;
    writeFileSync(transcript, '');
    // Another agent's record, under this agent's name; and one that names the agent as its own parent.
    writeFileSync(
      join(base, 'subagents', 'agent-a1.meta.json'),
      JSON.stringify({ agentId: 'a2', parentAgentId: 'p' }),
    );
    writeFileSync(join(base, 'subagents', 'agent-a3.meta.json'), JSON.stringify({ parentAgentId: 'a3' }));
    // `agent-../../x.meta.json` would be subagents/x.meta.json, were the id taken as a path.
    mkdirSync(join(base, 'subagents', 'agent-..'));
    writeFileSync(join(base, 'subagents', 'x.meta.json'), JSON.stringify({ parentAgentId: 'outside' }));
    const event = (agent: string) =>
      translateClaudeCode({
        session_id: 'session-x',
        transcript_path: transcript,
        hook_event_name: 'SubagentStart',
        agent_id: agent,
        agent_type: 'general-purpose',
      });
    const placed = (agent: string) => {
      const c = event(agent);
      const native = (c.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.native']!;
      return [c.agent.parent, native.parent_from];
    };
    assert.deepEqual(placed('a1'), ['session-x', 'session']);
    assert.deepEqual(placed('a3'), ['session-x', 'session']);
    assert.deepEqual(placed('../../x'), ['session-x', 'session']);
  });
});
