/**
 * The Qwen Code hooks that make Tally capture and control a session: one hook per covered native
 * event, `timeout` in seconds. Qwen Code has http hooks, but a failed http hook is non-blocking
 * there (it fails open, with no setting to make it block), so an event that must fail closed
 * (Tally's judge at PreToolUse) goes through the `tally hook qwen-code` shim, which answers deny
 * itself when the recorder cannot be reached; so does SessionStart, the event that starts a
 * recorder that is down. With the http transport every other event posts straight to the
 * recorder — no process per hook, which matters most here: UserPromptSubmit fires on every model
 * turn. With the command transport every event is the shim. Settings files: project `.qwen/settings.json`, user
 * `~/.qwen/settings.json`, system `/etc/qwen-code/settings.json` (or
 * `QWEN_CODE_SYSTEM_SETTINGS_PATH`), which overrides the other two.
 */
import { join } from 'node:path';
import type { Registration } from '../../ahp/registration/types.js';
import type { JsonObject } from '../../core/json.js';
import { AHP_EVENT_OF } from '../claude-code/hooks.js';
import { badField, checkHookGroups, mergeHooks, removeHooks } from '../hook-settings.js';
import {
  isRecorderHookUrl,
  isShimCommand,
  type NativeEventSpec,
  type NativeHookPlan,
  planNativeHooks,
  recorderHttpHook,
  shimHooksBlock,
} from '../plan.js';
import { QWEN_CODE_EVENTS, type QwenCodeEvent } from './translate.js';

const TOOL_EVENTS = new Set<string>(['PreToolUse', 'PostToolUse', 'PostToolUseFailure']);

export const QWEN_CODE_SPECS = Object.fromEntries(
  (Object.keys(QWEN_CODE_EVENTS) as QwenCodeEvent[]).map((e) => [
    e,
    { ahp: AHP_EVENT_OF[e], tool: TOOL_EVENTS.has(e) },
  ]),
) as Record<QwenCodeEvent, NativeEventSpec>;

export function planQwenCodeHooks(registration: Registration): NativeHookPlan<QwenCodeEvent>[] {
  return planNativeHooks(registration, QWEN_CODE_SPECS);
}

const KNOWN_EVENTS = new Set([...Object.keys(QWEN_CODE_EVENTS), 'PostToolBatch', 'PermissionRequest']);

/** How one planned event reaches the recorder under a transport: only fail-open events go over http. */
export function qwenTransport(
  plan: NativeHookPlan<QwenCodeEvent>,
  transport: 'http' | 'command',
): 'http' | 'command' {
  return transport === 'http' && !plan.failClosed && plan.event !== 'SessionStart' ? 'http' : 'command';
}

export interface QwenHookOptions {
  port: number;
  tally: string;
  /** The POSIX sh shim command, when sh and curl are here (see ShimHookOptions). */
  sh?: string;
  agent?: string;
  transport: 'http' | 'command';
}

/** The settings `hooks` block: the shim for every event, or over http where qwenTransport says. */
export function qwenCodeHooks(
  plans: readonly NativeHookPlan<QwenCodeEvent>[],
  options: QwenHookOptions,
): Record<string, JsonObject[]> {
  const block = shimHooksBlock(plans, {
    tally: options.tally,
    ...(options.sh ? { sh: options.sh } : {}),
    channel: 'qwen-code',
    timeoutUnit: 's',
    ...(options.agent ? { agent: options.agent } : {}),
  });
  for (const plan of plans)
    if (qwenTransport(plan, options.transport) === 'http')
      block[plan.event] = (block[plan.event] ?? []).map((group) => ({
        ...group,
        hooks: [recorderHttpHook('qwen-code', options.port, plan.timeoutS, options.agent)],
      }));
  return block;
}

export function isQwenTallyHook(hook: unknown): boolean {
  if (typeof hook !== 'object' || hook === null) return false;
  const h = hook as JsonObject;
  return h.type === 'http' ? isRecorderHookUrl(h.url, 'qwen-code') : isShimCommand(h.command, 'qwen-code');
}

export function checkQwenHooks(hooks: unknown): void {
  checkHookGroups(hooks, KNOWN_EVENTS, 'Qwen Code', (h, hp) => {
    if (h.type === 'command') {
      if (typeof h.command !== 'string' || h.command === '')
        badField(`${hp}/command`, 'must be a non-empty string');
    } else if (h.type === 'http') {
      if (typeof h.url !== 'string' || !/^https?:\/\//.test(h.url))
        badField(`${hp}/url`, 'must be an http(s) URL');
    } else if (h.type !== 'prompt') badField(`${hp}/type`, "must be 'command', 'http' or 'prompt'");
    if (h.timeout !== undefined && !(typeof h.timeout === 'number' && h.timeout > 0))
      badField(`${hp}/timeout`, 'must be a positive number of seconds');
  });
}

export function withQwenTallyHooks(settings: JsonObject, ours: Record<string, JsonObject[]>): JsonObject {
  const out = mergeHooks(settings, ours, isQwenTallyHook);
  checkQwenHooks(out.hooks);
  return out;
}

export function withoutQwenTallyHooks(settings: JsonObject): JsonObject {
  return removeHooks(settings, isQwenTallyHook);
}

export function qwenSettingsPath(
  scope: 'project' | 'user' | 'managed',
  root: string,
  home: string,
  env: NodeJS.ProcessEnv,
): string {
  if (scope === 'project') return join(root, '.qwen', 'settings.json');
  if (scope === 'user') return join(home, '.qwen', 'settings.json');
  return env.QWEN_CODE_SYSTEM_SETTINGS_PATH || '/etc/qwen-code/settings.json';
}

/** What Qwen Code's native answers cannot say, for the installer to print. */
export const QWEN_CODE_GAPS: readonly string[] = [
  'ask: in headless -p mode Qwen Code refuses the call (there is no one to ask)',
  'PreToolUse: `return` (a supplied result instead of running the tool) has no native answer; it is refused as deny',
  'PostToolUse: `modify` of the tool output has no native answer',
  'http hooks fail open in Qwen Code (no onFailure setting): PreToolUse (fail-closed) and SessionStart always go through the command shim, a process per hook; with the http transport (tally run; install with TALLY_RECORDER_SECRET set) the other events post to the recorder, and one it cannot take is lost rather than spooled',
  'a shim that outlives its timeout is killed and Qwen Code goes on (fails open); the shim itself answers the fail-closed policy when the recorder is unreachable',
  'SessionEnd does not fire in -p mode: a session the recorder opened for a headless run stays open until closed (tally run closes its own)',
];
