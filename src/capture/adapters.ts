/**
 * Every native adapter the recorder serves at `POST /hooks/<harness>`: how the agent's payload
 * becomes a canonical event and how a settled decision becomes the agent's exact answer. Adding an
 * agent adds one folder and one line here.
 */
import type { BoundaryDecision } from '../boundary/boundary.js';
import { isJsonObject, type JsonObject } from '../core/json.js';
import { claudeCodeAnswer } from './claude-code/answer.js';
import { translateClaudeCode } from './claude-code/translate.js';
import { codexAnswer } from './codex/answer.js';
import { translateCodex } from './codex/translate.js';
import { cursorAnswer } from './cursor/answer.js';
import { locateCursor, translateCursor } from './cursor/translate.js';
import { geminiCliAnswer } from './gemini-cli/answer.js';
import { translateGeminiCli } from './gemini-cli/translate.js';
import { openCodeAnswer } from './opencode/answer.js';
import { translateOpenCode } from './opencode/translate.js';
import { translateQwenCode } from './qwen-code/translate.js';
import type { Captured } from './types.js';

export interface NativeAdapter {
  harness: string;
  translate(payload: unknown, id?: string): Captured;
  answer(nativeEvent: string, decision: BoundaryDecision | null): JsonObject;
  /** The native event that ends the harness session (a session opened for it is sealed then). */
  endEvent?: string;
  /**
   * The harness session and directory a payload names, read without translating it: where a
   * payload Tally cannot judge is recorded as rejected. Default: `session_id` and `cwd`.
   */
  locate?: (payload: unknown) => PayloadLocation | undefined;
}

export interface PayloadLocation {
  harnessSession: string;
  cwd: string;
}

/** `session_id` and `cwd`: the fields of every adapter's payloads but Cursor's. */
export function locateSession(payload: unknown): PayloadLocation | undefined {
  if (!isJsonObject(payload) || typeof payload.session_id !== 'string' || typeof payload.cwd !== 'string')
    return undefined;
  return { harnessSession: payload.session_id, cwd: payload.cwd };
}

export const ADAPTERS: Readonly<Record<string, NativeAdapter>> = {
  'claude-code': {
    harness: 'claude-code',
    translate: translateClaudeCode,
    answer: claudeCodeAnswer,
    endEvent: 'SessionEnd',
  },
  'gemini-cli': {
    harness: 'gemini-cli',
    translate: translateGeminiCli,
    answer: geminiCliAnswer,
    endEvent: 'SessionEnd',
  },
  // Qwen Code answers in Claude Code's format; `ask` in `-p` is refused by Qwen itself.
  'qwen-code': {
    harness: 'qwen-code',
    translate: translateQwenCode,
    answer: claudeCodeAnswer,
    endEvent: 'SessionEnd',
  },
  codex: { harness: 'codex', translate: translateCodex, answer: codexAnswer, endEvent: 'SessionEnd' },
  opencode: { harness: 'opencode', translate: translateOpenCode, answer: openCodeAnswer },
  cursor: { harness: 'cursor', translate: translateCursor, answer: cursorAnswer, locate: locateCursor },
};

export function adapterOf(harness: string): NativeAdapter | undefined {
  return Object.hasOwn(ADAPTERS, harness) ? ADAPTERS[harness] : undefined;
}
