/**
 * The Claude Code hooks that make Tally capture and control a session, computed from the
 * portable registration: one native hook per native event, pointing at the recorder (`http`
 * where Claude Code sends it, the `tally hook claude-code` command shim for SessionStart, which it
 * does not). Order lives in the recorder (Claude Code runs matching hooks in parallel), so there
 * is exactly one Tally hook per event. Its timeout is the event's whole intercept deadline (the
 * subscriptions run one after another) plus a margin; it fails closed (`onFailure: "block"`)
 * exactly when an intercept subscription at that event is fail-closed — Tally's own certificate
 * judge always is, at tool.before.
 */

import type { Registration } from '../../ahp/registration/types.js';
import type { JsonObject } from '../../core/json.js';
import {
  isRecorderHookUrl,
  isShimCommand,
  type NativeEventSpec,
  planNativeHooks,
  recorderHttpHook,
  shimCommand,
} from '../plan.js';
import { CLAUDE_CODE_EVENTS, type ClaudeCodeEvent } from './translate.js';

/** The AHP event each native event becomes (what subscriptions select). */
export const AHP_EVENT_OF: Record<ClaudeCodeEvent, string> = {
  SessionStart: 'session.start',
  UserPromptSubmit: 'turn.start',
  PreToolUse: 'tool.before',
  PermissionRequest: 'tool.permission.request',
  PostToolUse: 'tool.after',
  PostToolUseFailure: 'tool.after',
  SubagentStart: 'dev.tally.agent.start',
  SubagentStop: 'dev.tally.agent.stop',
  Stop: 'turn.end',
  PreCompact: 'context.compact.before',
  Notification: 'user.attention',
  SessionEnd: 'session.end',
};

/** Native events whose hooks take a matcher (the tool name). */
const TOOL_EVENTS = new Set<ClaudeCodeEvent>([
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
]);
/** Events Claude Code does not send to http hooks, and one the shim needs to restart the recorder. */
const COMMAND_EVENTS = new Set<ClaudeCodeEvent>(['SessionStart']);

const SPECS = Object.fromEntries(
  (Object.keys(CLAUDE_CODE_EVENTS) as ClaudeCodeEvent[]).map((e) => [
    e,
    { ahp: AHP_EVENT_OF[e], tool: TOOL_EVENTS.has(e) },
  ]),
) as Record<ClaudeCodeEvent, NativeEventSpec>;

export interface HookPlan {
  event: ClaudeCodeEvent;
  ahpEvent: string;
  transport: 'http' | 'command';
  timeoutS: number;
  failClosed: boolean;
  /** Who asks for it: the backends whose subscriptions cover the event (the recorder always). */
  backends: string[];
}

export interface HookOptions {
  port: number;
  /** How tally is invoked for the command shim (e.g. `tally` or `node /…/bin/tally.js`). */
  tally: string;
  /** The POSIX sh shim command (`'/…/bin/tally-hook' --node '/…/node'`), when sh and curl are here. */
  sh?: string;
  /** The agent whose certificate sessions opened for this harness run under. */
  agent?: string;
  /** http hooks for every event Claude Code sends over http; command shims for all otherwise. */
  transport: 'http' | 'command';
}

/** What each native hook must be, from the registration the recorder dispatches (judge included). */
export function planHooks(registration: Registration): HookPlan[] {
  return planNativeHooks(registration, SPECS).map(({ tool: _tool, ...plan }) => ({
    ...plan,
    transport: COMMAND_EVENTS.has(plan.event) ? 'command' : 'http',
  }));
}

/** The settings `hooks` block: `{Event: [{matcher?, hooks: [hook]}]}`. */
export function claudeCodeHooks(
  plans: readonly HookPlan[],
  options: HookOptions,
): Record<string, JsonObject[]> {
  const out: Record<string, JsonObject[]> = {};
  for (const plan of plans) {
    const command = options.transport === 'command' || plan.transport === 'command';
    const hook: JsonObject = command
      ? {
          type: 'command',
          command: shimCommand(options.tally, 'claude-code', plan.failClosed, options.agent, options.sh),
          timeout: plan.timeoutS,
        }
      : {
          ...recorderHttpHook('claude-code', options.port, plan.timeoutS, options.agent),
          ...(plan.failClosed ? { onFailure: 'block' } : {}),
        };
    out[plan.event] = [{ ...(TOOL_EVENTS.has(plan.event) ? { matcher: '' } : {}), hooks: [hook] }];
  }
  return out;
}

/** True for a hook Tally wrote (its URL or its shim command), whatever the port or agent. */
export function isTallyHook(hook: unknown): boolean {
  if (typeof hook !== 'object' || hook === null) return false;
  const h = hook as { type?: unknown; url?: unknown; command?: unknown };
  if (h.type === 'http') return isRecorderHookUrl(h.url, 'claude-code');
  if (h.type === 'command') return isShimCommand(h.command, 'claude-code');
  return false;
}
