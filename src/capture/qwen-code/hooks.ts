/**
 * The Qwen Code hooks that make Tally capture and control a session: one command hook per covered
 * native event, each the `tally hook qwen-code` shim, `timeout` in seconds. Qwen Code also has http
 * hooks, but a failed http hook is non-blocking there (it fails open, with no setting to make it
 * block), so Tally's fail-closed judge goes through the shim, which answers deny itself when the
 * recorder cannot be reached. Settings files: project `.qwen/settings.json`, user
 * `~/.qwen/settings.json`, system `/etc/qwen-code/settings.json` (or
 * `QWEN_CODE_SYSTEM_SETTINGS_PATH`), which overrides the other two.
 */
import { join } from 'node:path';
import type { Registration } from '../../ahp/registration/types.js';
import type { JsonObject } from '../../core/json.js';
import { AHP_EVENT_OF } from '../claude-code/hooks.js';
import { badField, checkHookGroups, mergeHooks, removeHooks } from '../hook-settings.js';
import { isShimCommand, type NativeEventSpec, type NativeHookPlan, planNativeHooks } from '../plan.js';
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

export function isQwenTallyHook(hook: unknown): boolean {
  return (
    typeof hook === 'object' && hook !== null && isShimCommand((hook as JsonObject).command, 'qwen-code')
  );
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
  'http hooks fail open in Qwen Code (no onFailure setting): every event goes through the command shim, a process per hook',
  'a shim that outlives its timeout is killed and Qwen Code goes on (fails open); the shim itself answers the fail-closed policy when the recorder is unreachable',
  'SessionEnd does not fire in -p mode: a session the recorder opened for a headless run stays open until closed (tally run closes its own)',
];
