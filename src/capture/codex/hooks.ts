/**
 * The Codex hooks that make Tally capture and control a session: one command hook per covered
 * native event (Codex has no http hooks), each the `tally hook codex` shim, `timeout` in seconds,
 * in Claude Code's hooks format. Files: `$CODEX_HOME/hooks.json` (user, `~/.codex` by default;
 * its hooks run once trusted) and `/etc/codex/hooks.json` (managed: needs no trust, out of the
 * agent's reach).
 */
import { join } from 'node:path';
import type { Registration } from '../../ahp/registration/types.js';
import type { JsonObject } from '../../core/json.js';
import { AHP_EVENT_OF } from '../claude-code/hooks.js';
import { badField, checkHookGroups, mergeHooks, removeHooks } from '../hook-settings.js';
import { isShimCommand, type NativeEventSpec, type NativeHookPlan, planNativeHooks } from '../plan.js';
import { CODEX_EVENTS, type CodexEvent } from './translate.js';

export const CODEX_SPECS = Object.fromEntries(
  (Object.keys(CODEX_EVENTS) as CodexEvent[]).map((e) => [
    e,
    { ahp: AHP_EVENT_OF[e], tool: e === 'PreToolUse' || e === 'PostToolUse' },
  ]),
) as Record<CodexEvent, NativeEventSpec>;

export function planCodexHooks(registration: Registration): NativeHookPlan<CodexEvent>[] {
  return planNativeHooks(registration, CODEX_SPECS);
}

const KNOWN_EVENTS = new Set([
  ...Object.keys(CODEX_EVENTS),
  'PermissionRequest',
  'PreCompact',
  'PostCompact',
]);

export function isCodexTallyHook(hook: unknown): boolean {
  return typeof hook === 'object' && hook !== null && isShimCommand((hook as JsonObject).command, 'codex');
}

export function checkCodexHooks(hooks: unknown): void {
  checkHookGroups(hooks, KNOWN_EVENTS, 'Codex', (h, hp) => {
    if (h.type !== 'command') badField(`${hp}/type`, "must be 'command' (Codex has no http hooks)");
    if (typeof h.command !== 'string' || h.command === '')
      badField(`${hp}/command`, 'must be a non-empty string');
    if (h.timeout !== undefined && !(typeof h.timeout === 'number' && h.timeout > 0))
      badField(`${hp}/timeout`, 'must be a positive number of seconds');
  });
}

export function withCodexTallyHooks(settings: JsonObject, ours: Record<string, JsonObject[]>): JsonObject {
  const out = mergeHooks(settings, ours, isCodexTallyHook);
  checkCodexHooks(out.hooks);
  return out;
}

export function withoutCodexTallyHooks(settings: JsonObject): JsonObject {
  return removeHooks(settings, isCodexTallyHook);
}

/** `$CODEX_HOME` (default `~/.codex`): where Codex keeps config.toml, hooks.json and its sessions. */
export function codexHome(env: NodeJS.ProcessEnv, home: string): string {
  return env.CODEX_HOME || join(home, '.codex');
}

export function codexHooksPath(
  scope: 'project' | 'user' | 'managed',
  home: string,
  env: NodeJS.ProcessEnv,
): string {
  if (scope === 'managed') return '/etc/codex/hooks.json';
  return join(codexHome(env, home), 'hooks.json');
}
