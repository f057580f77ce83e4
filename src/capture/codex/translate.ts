/**
 * Codex's hook payloads → canonical AHP events. Codex speaks Claude Code's hook format (same event
 * names and fields, plus `turn_id` and `model`): shell calls arrive as tool `Bash` with
 * `tool_input.command`, patches as tool `apply_patch` with the whole patch text in
 * `tool_input.command`. A patch that ran reports every file it added, updated, deleted or moved.
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { CLAUDE_CODE_EVENTS, type ClaudeDialect, translateClaudeFamily } from '../claude-code/translate.js';
import type { Captured } from '../types.js';
import { patchChanges } from './patch.js';

export const CODEX_SOURCE = 'urn:tally:codex';

/** The events the pinned Codex fires (test/agents/README.md). */
export const CODEX_EVENTS = {
  SessionStart: CLAUDE_CODE_EVENTS.SessionStart,
  UserPromptSubmit: CLAUDE_CODE_EVENTS.UserPromptSubmit,
  PreToolUse: CLAUDE_CODE_EVENTS.PreToolUse,
  PostToolUse: CLAUDE_CODE_EVENTS.PostToolUse,
  Stop: CLAUDE_CODE_EVENTS.Stop,
  SessionEnd: CLAUDE_CODE_EVENTS.SessionEnd,
} as const;
export type CodexEvent = keyof typeof CODEX_EVENTS;

const KINDS: Record<string, string> = { Bash: 'shell', apply_patch: 'file_edit' };

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

export function translateCodex(payload: unknown, id?: string): Captured {
  return translateClaudeFamily(payload, CODEX_DIALECT, id, CODEX_EVENTS);
}
