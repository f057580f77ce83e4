/**
 * Qwen Code's hook payloads → canonical AHP events. Qwen Code speaks Claude Code's hook format
 * (same event names, `tool_use_id`, the same answers) with Gemini CLI's tools (it is a fork of
 * it): the Claude Code builders with Gemini's tool kinds and changed-file reports.
 *
 * `agent {working_dir}` runs a subagent in another directory (an existing worktree), yet the
 * subagent's hooks report the session's `cwd` (measured: its `echo x > sa.txt` wrote the
 * worktree's file). Qwen names that subagent `<subagent_type>-<tool_call_id of the agent call>`, so
 * the adapter keeps each such call's directory and makes it the cwd of the subagent's events (or
 * marks them opaque when it cannot be read), as for a shell tool's own directory argument.
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { directoryOf, placeEvent } from '../call-directory.js';
import { ClaudeFamilyAgents, qwenSubagentMeta } from '../claude-code/agents.js';
import { qwenCodeModelLine, TranscriptModels } from '../claude-code/models.js';
import { CLAUDE_CODE_EVENTS, type ClaudeDialect, translateClaudeFamily } from '../claude-code/translate.js';
import { GEMINI_FAMILY_KINDS, geminiFamilyFileChanges } from '../gemini-cli/translate.js';
import type { Captured } from '../types.js';

export const QWEN_CODE_SOURCE = 'urn:tally:qwen-code';

/** The events the pinned Qwen Code fires that this channel translates (no SessionEnd in `-p`). */
export const QWEN_CODE_EVENTS = {
  SessionStart: CLAUDE_CODE_EVENTS.SessionStart,
  UserPromptSubmit: CLAUDE_CODE_EVENTS.UserPromptSubmit,
  PreToolUse: CLAUDE_CODE_EVENTS.PreToolUse,
  PostToolUse: CLAUDE_CODE_EVENTS.PostToolUse,
  PostToolUseFailure: CLAUDE_CODE_EVENTS.PostToolUseFailure,
  SubagentStart: CLAUDE_CODE_EVENTS.SubagentStart,
  SubagentStop: CLAUDE_CODE_EVENTS.SubagentStop,
  Stop: CLAUDE_CODE_EVENTS.Stop,
  PreCompact: CLAUDE_CODE_EVENTS.PreCompact,
  Notification: CLAUDE_CODE_EVENTS.Notification,
  SessionEnd: CLAUDE_CODE_EVENTS.SessionEnd,
} as const;
export type QwenCodeEvent = keyof typeof QWEN_CODE_EVENTS;

export const QWEN_CODE_DIALECT: ClaudeDialect = {
  harness: 'qwen-code',
  label: 'Qwen Code',
  source: QWEN_CODE_SOURCE,
  kinds: GEMINI_FAMILY_KINDS,
  fileChanges: geminiFamilyFileChanges,
  // Gemini CLI's `dir_path`, as the fork names it; Qwen refuses a relative one.
  directories: { run_shell_command: 'directory' },
};

/**
 * Qwen Code's subagents and models (../claude-code/agents.ts): `agent` spawns (a subagent's id is
 * `<type>-<tool_call_id of its spawn>`); its `.meta.json` is in `<project>/subagents/<session>/`; the
 * session's transcript names every agent's model (SessionStart's `model` names the session's own).
 */
const QWEN_CODE_AGENTS = new ClaudeFamilyAgents({
  spawnTools: ['agent'],
  metaPath: qwenSubagentMeta,
  modelSource: (transcript, agent) => ({ path: transcript, agent: agent ?? '' }),
  models: new TranscriptModels(qwenCodeModelLine),
});

type Place = { cwd: string } | { opaque: string };

/** Per session: the `agent` calls that named a `working_dir`, by the model's call id, and where they point. */
const PINNED = new Map<string, Map<string, Place>>();
const KEPT = 256;

function pin(session: string, payload: JsonObject): void {
  const input = payload.tool_input;
  // The model's id of the call (`tool_call_id`), which the subagent's name carries.
  const call = payload.tool_call_id;
  if (!isJsonObject(input) || !Object.hasOwn(input, 'working_dir') || typeof call !== 'string') return;
  let calls = PINNED.get(session);
  if (calls === undefined) {
    if (PINNED.size >= KEPT) PINNED.delete(PINNED.keys().next().value as string);
    calls = new Map();
    PINNED.set(session, calls);
  }
  if (calls.size >= KEPT) calls.delete(calls.keys().next().value as string);
  calls.set(call, directoryOf(input.working_dir, payload.cwd, "agent's working_dir"));
}

/** Where the subagent `agent` runs, when its agent call named a directory. */
function pinnedPlace(session: string, agent: string): Place | undefined {
  for (const [call, place] of PINNED.get(session) ?? [])
    if (agent.endsWith(`-${call}`) && agent.length > call.length + 1) return place;
  return undefined;
}

export function translateQwenCode(payload: unknown, id?: string): Captured {
  if (!isJsonObject(payload) || typeof payload.session_id !== 'string')
    return QWEN_CODE_AGENTS.attribute(
      translateClaudeFamily(payload, QWEN_CODE_DIALECT, id, QWEN_CODE_EVENTS),
      payload as JsonObject,
    );
  const session = payload.session_id;
  if (payload.hook_event_name === 'SessionEnd') PINNED.delete(session);
  const place = typeof payload.agent_id === 'string' ? pinnedPlace(session, payload.agent_id) : undefined;
  // The subagent's events are read from its own directory (a shell directory of its own resolved
  // against it); the recorder still finds the session by the cwd Qwen reported.
  const seen = place !== undefined && 'cwd' in place ? { ...payload, cwd: place.cwd } : payload;
  const captured = QWEN_CODE_AGENTS.attribute(
    translateClaudeFamily(seen, QWEN_CODE_DIALECT, id, QWEN_CODE_EVENTS),
    payload,
  );
  if (typeof payload.cwd === 'string' && payload.cwd !== '') captured.cwd = payload.cwd;
  else delete captured.cwd;
  if (place !== undefined && 'opaque' in place) placeEvent(captured.event, place);
  if (payload.hook_event_name === 'PreToolUse' && payload.tool_name === 'agent') pin(session, payload);
  return captured;
}
