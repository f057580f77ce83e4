/**
 * Qwen Code's hook payloads → canonical AHP events. Qwen Code speaks Claude Code's hook format
 * (same event names, `tool_use_id`, the same answers) with Gemini CLI's tools (it is a fork of
 * it): the Claude Code builders with Gemini's tool kinds and changed-file reports.
 */
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

export function translateQwenCode(payload: unknown, id?: string): Captured {
  return translateClaudeFamily(payload, QWEN_CODE_DIALECT, id, QWEN_CODE_EVENTS);
}
