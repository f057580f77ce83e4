/**
 * Qwen Code's hook payloads → canonical AHP events. Qwen Code speaks Claude Code's hook format
 * (same event names, `tool_use_id`, the same answers) with Gemini CLI's tools (it is a fork of
 * it): the Claude Code builders with Gemini's tool kinds and changed-file reports.
 */
import type { JsonObject } from '../../core/json.js';
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

export function translateQwenCode(payload: unknown, id?: string): Captured {
  const captured = translateClaudeFamily(payload, QWEN_CODE_DIALECT, id, QWEN_CODE_EVENTS);
  return QWEN_CODE_AGENTS.attribute(captured, payload as JsonObject);
}
