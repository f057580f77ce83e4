/**
 * Codex's hook payloads → canonical AHP events. Codex speaks Claude Code's hook format (same event
 * names and fields, plus `turn_id` and `model`): shell calls arrive as tool `Bash` with
 * `tool_input.command`, patches as tool `apply_patch` with the whole patch text in
 * `tool_input.command`. A patch that ran reports every file it added, updated, deleted or moved.
 *
 * A shell call is recorded as the tool the model called, `exec_command`, with its `tty` as the
 * thread's rollout shows it (./exec-call.ts): a process on a terminal can be typed into later by
 * `write_stdin`, which fires no hook, and the policy judges such a call by what it may read there.
 *
 * Subagents (the pinned version's `spawn_agent`, test/agents/README.md): SubagentStart and
 * SubagentStop, and every hook the subagent's own tools fire, carry the parent's `session_id` with
 * the child thread's `agent_id` and `agent_type`, so the child is an instance of its own whose
 * parent is the session's thread. Every payload names the `model` the thread runs; the provider
 * comes from the thread's rollout file (./rollout.ts).
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { CLAUDE_CODE_EVENTS, type ClaudeDialect, translateClaudeFamily } from '../claude-code/translate.js';
import type { Captured } from '../types.js';
import { execCallOf } from './exec-call.js';
import { patchChanges } from './patch.js';
import { rolloutProvider } from './rollout.js';

/** The extension naming the provider of `session.model`, as the harness reported it. */
export const MODEL_EXTENSION = 'dev.tally.model';

export const CODEX_SOURCE = 'urn:tally:codex';

/** The events the pinned Codex fires (test/agents/README.md). */
export const CODEX_EVENTS = {
  SessionStart: CLAUDE_CODE_EVENTS.SessionStart,
  UserPromptSubmit: CLAUDE_CODE_EVENTS.UserPromptSubmit,
  PreToolUse: CLAUDE_CODE_EVENTS.PreToolUse,
  PostToolUse: CLAUDE_CODE_EVENTS.PostToolUse,
  SubagentStart: CLAUDE_CODE_EVENTS.SubagentStart,
  SubagentStop: CLAUDE_CODE_EVENTS.SubagentStop,
  Stop: CLAUDE_CODE_EVENTS.Stop,
  SessionEnd: CLAUDE_CODE_EVENTS.SessionEnd,
} as const;
export type CodexEvent = keyof typeof CODEX_EVENTS;

const KINDS: Record<string, string> = {
  Bash: 'shell',
  exec_command: 'shell',
  shell: 'shell',
  local_shell: 'shell',
  apply_patch: 'file_edit',
};

/** A patch's changes, once Codex reports it applied (`Exit code: 0` / `Success.`). */
function codexFileChanges(payload: JsonObject): JsonObject[] {
  if (payload.tool_name !== 'apply_patch' || !isJsonObject(payload.tool_input)) return [];
  const patch = payload.tool_input.command ?? payload.tool_input.patch ?? payload.tool_input.input;
  if (typeof patch !== 'string') return [];
  const response = typeof payload.tool_response === 'string' ? payload.tool_response : '';
  if (!/^Exit code: 0\b/m.test(response) && !/\bSuccess\./.test(response)) return [];
  return patchChanges(patch).map((c) => ({ ...c }));
}

export const CODEX_DIALECT: ClaudeDialect = {
  harness: 'codex',
  label: 'Codex',
  source: CODEX_SOURCE,
  kinds: KINDS,
  fileChanges: codexFileChanges,
};

/**
 * The thread a spawn answered with: `spawn_agent` (multi-agent v1) answers `{"agent_id", "nickname"}`
 * as a JSON string; v2 (`collaborationspawn_agent`) answers only a task name.
 */
function spawned(payload: JsonObject): JsonObject | undefined {
  if (payload.hook_event_name !== 'PostToolUse' || typeof payload.tool_name !== 'string') return undefined;
  if (!payload.tool_name.endsWith('spawn_agent') || typeof payload.tool_response !== 'string')
    return undefined;
  let answer: unknown;
  try {
    answer = JSON.parse(payload.tool_response);
  } catch {
    return undefined;
  }
  if (!isJsonObject(answer)) return undefined;
  const out: JsonObject = {};
  for (const key of ['agent_id', 'nickname', 'task_name'] as const)
    if (typeof answer[key] === 'string' && answer[key] !== '') out[key] = answer[key];
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * A `Bash` hook's call as the model made it: `exec_command` (or Codex's other shell tool the
 * rollout names) with its `tty`. A call the rollout does not show is taken to be on a terminal
 * (`tty: true`, `rollout_call: "not found"`): fail closed, since the hook cannot say otherwise.
 */
function execTool(captured: Captured, p: JsonObject): void {
  const tool = captured.event.tool;
  if (!isJsonObject(tool) || tool.name !== 'Bash' || !isJsonObject(tool.input)) return;
  const command = tool.input.command;
  const call = p.tool_use_id;
  const path = p.transcript_path;
  const found =
    typeof command === 'string' && typeof call === 'string' && typeof path === 'string'
      ? execCallOf(path, call, command, p.hook_event_name === 'PreToolUse')
      : undefined;
  tool.name = found?.name ?? 'exec_command';
  const tty = found === undefined ? true : found.tty;
  if (tty !== undefined) tool.input = { ...tool.input, tty };
  const ext = (captured.event.extensions as JsonObject)['dev.tally.native'] as JsonObject;
  ext.hook_tool = 'Bash';
  ext.rollout_call = found === undefined ? 'not found' : 'found';
}

export function translateCodex(payload: unknown, id?: string): Captured {
  const captured = translateClaudeFamily(payload, CODEX_DIALECT, id, CODEX_EVENTS);
  const p = payload as JsonObject;
  execTool(captured, p);
  if (typeof p.model === 'string' && p.model !== '') {
    // The model the acting thread runs, as Codex reports it on every event but SessionEnd.
    (captured.event.session as JsonObject).model = p.model;
    captured.agent.model = p.model;
    // The acting thread's rollout: a SubagentStop's is the child's, named apart from the parent's.
    const rollout =
      typeof p.agent_transcript_path === 'string' && p.agent_id !== undefined
        ? p.agent_transcript_path
        : p.transcript_path;
    const provider = typeof rollout === 'string' ? rolloutProvider(rollout) : undefined;
    if (provider !== undefined) (captured.event.extensions as JsonObject)[MODEL_EXTENSION] = { provider };
  }
  const child = spawned(p);
  if (child !== undefined) {
    const ext = (captured.event.extensions as JsonObject)['dev.tally.native'] as JsonObject;
    ext.spawned = child;
  }
  return captured;
}
