/**
 * The Gemini CLI adapter's subagent attribution, branch by branch, on payloads and transcript files
 * shaped as the pinned CLI writes them (test/agents/gemini-cli-subagent.test.ts runs the real one):
 * a denied invoke_agent leaves the parent acting, a started subagent's calls are its own, an
 * AfterTool takes its BeforeTool's agent, and the parent acts again once the call returns.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { translateGeminiCli } from '../../src/capture/gemini-cli/translate.js';

const root = mkdtempSync(join(tmpdir(), 'tally-gemini-subagents-'));
after(() => rmSync(root, { recursive: true, force: true }));

let sessions = 0;

/** A session: its chats folder, the main transcript, and a payload maker with a moving clock. */
function session() {
  const id = `session-${++sessions}`;
  const chats = join(root, id, 'chats');
  mkdirSync(chats, { recursive: true });
  const transcript = join(chats, `session-${id}.jsonl`);
  writeFileSync(
    transcript,
    `${JSON.stringify({ sessionId: id, kind: 'main' })}\n${JSON.stringify({ type: 'gemini', content: '', model: 'main-model' })}\n`,
  );
  let clock = Date.parse('2026-01-01T00:00:00.000Z');
  const at = () => {
    clock += 10;
    return new Date(clock).toISOString();
  };
  const tool = (event: 'BeforeTool' | 'AfterTool', name: string, input: Record<string, unknown>) =>
    translateGeminiCli({
      session_id: id,
      transcript_path: transcript,
      cwd: root,
      hook_event_name: event,
      timestamp: at(),
      tool_name: name,
      tool_input: input,
      ...(event === 'AfterTool' ? { tool_response: { llmContent: 'ok' } } : {}),
    });
  /** Gemini starting a subagent: its transcript beside the session's. */
  const startSubagent = (agentId: string, task: string) => {
    mkdirSync(join(chats, id), { recursive: true });
    const lines = [
      { sessionId: agentId, kind: 'subagent', startTime: at() },
      { type: 'user', content: [{ text: task }] },
      { type: 'gemini', content: '', model: 'sub-model' },
    ];
    writeFileSync(join(chats, id, `${agentId}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  };
  return { id, tool, startSubagent };
}

const who = (c: ReturnType<typeof translateGeminiCli>) => [
  c.agent.instance,
  c.agent.parent ?? null,
  c.agent.model,
];

describe('Gemini CLI subagent attribution', () => {
  it('a subagent’s calls are its own between its invoke_agent call’s BeforeTool and AfterTool', () => {
    const s = session();
    const invoke = { agent_name: 'generalist', prompt: 'TASK-ONE: write' };
    assert.deepEqual(who(s.tool('BeforeTool', 'invoke_agent', invoke)), [s.id, null, 'main-model']);
    s.startSubagent('agent-1', 'TASK-ONE: write');
    const before = s.tool('BeforeTool', 'write_file', { file_path: 'a' });
    assert.deepEqual(who(before), ['agent-1', s.id, 'sub-model']);
    assert.deepEqual((before.event.session as Record<string, unknown>).agent, {
      id: 'agent-1',
      type: 'generalist',
    });
    assert.equal((before.event.session as Record<string, unknown>).model, 'sub-model');
    assert.deepEqual(who(s.tool('AfterTool', 'write_file', { file_path: 'a' })), [
      'agent-1',
      s.id,
      'sub-model',
    ]);
    const returned = s.tool('AfterTool', 'invoke_agent', invoke);
    assert.deepEqual(who(returned), [s.id, null, 'main-model']);
    const ext = (returned.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.native']!;
    assert.deepEqual(ext.spawned, { agent_id: 'agent-1', agent_name: 'generalist' });
    assert.deepEqual(who(s.tool('BeforeTool', 'write_file', { file_path: 'b' })), [s.id, null, 'main-model']);
  });

  it('a denied invoke_agent (no subagent, no AfterTool) leaves the parent acting; a later one is matched by its task', () => {
    const s = session();
    s.tool('BeforeTool', 'invoke_agent', { agent_name: 'generalist', prompt: 'DENIED-TASK' });
    assert.deepEqual(who(s.tool('BeforeTool', 'run_shell_command', { command: 'echo a' })), [
      s.id,
      null,
      'main-model',
    ]);
    s.tool('AfterTool', 'run_shell_command', { command: 'echo a' });
    const invoke = { agent_name: 'codebase_investigator', prompt: 'TASK-TWO: look' };
    s.tool('BeforeTool', 'invoke_agent', invoke);
    s.startSubagent('agent-2', 'Your objective: TASK-TWO: look');
    const c = s.tool('BeforeTool', 'read_file', { file_path: 'x' });
    assert.deepEqual(who(c), ['agent-2', s.id, 'sub-model']);
    assert.equal(
      c.agent.type,
      'codebase_investigator',
      'the call whose prompt the task holds, not the denied one',
    );
  });

  it('a parent call of the same turn keeps the parent when its AfterTool comes while the subagent works', () => {
    const s = session();
    const invoke = { agent_name: 'generalist', prompt: 'TASK-THREE' };
    s.tool('BeforeTool', 'invoke_agent', invoke);
    // Validated with it, before either runs: the parent's.
    assert.deepEqual(who(s.tool('BeforeTool', 'run_shell_command', { command: 'sleep 1' })), [
      s.id,
      null,
      'main-model',
    ]);
    s.startSubagent('agent-3', 'TASK-THREE');
    assert.deepEqual(who(s.tool('BeforeTool', 'write_file', { file_path: 'c' }))[0], 'agent-3');
    assert.deepEqual(who(s.tool('AfterTool', 'run_shell_command', { command: 'sleep 1' })), [
      s.id,
      null,
      'main-model',
    ]);
  });

  it('two subagents running at once: a call stays the session’s and names both as candidates', () => {
    const s = session();
    s.tool('BeforeTool', 'invoke_agent', { agent_name: 'generalist', prompt: 'TASK-A' });
    s.tool('BeforeTool', 'invoke_agent', { agent_name: 'generalist', prompt: 'TASK-B' });
    s.startSubagent('agent-a', 'TASK-A');
    assert.deepEqual(who(s.tool('BeforeTool', 'write_file', { file_path: 'first' }))[0], 'agent-a');
    s.startSubagent('agent-b', 'TASK-B');
    const c = s.tool('BeforeTool', 'write_file', { file_path: 'second' });
    assert.deepEqual(who(c), [s.id, null, 'main-model']);
    const ext = (c.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.native']!;
    assert.deepEqual(ext.subagent_candidates, ['agent-a', 'agent-b']);
  });
});
