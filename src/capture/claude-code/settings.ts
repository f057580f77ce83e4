/**
 * Claude Code settings files: where each scope keeps them, and merging Tally's hooks in (and out)
 * without touching anything else. Claude Code drops a whole settings file silently when any part
 * of it fails its validation (test/agents/README.md), so what is written is checked here against
 * the hook shapes the pinned version accepts before it is written, and an existing file that is
 * not a JSON object is refused rather than overwritten.
 */
import { join } from 'node:path';
import type { JsonObject } from '../../core/json.js';
import { badField, checkHookGroups, mergeHooks, parseSettings, removeHooks } from '../hook-settings.js';
import { isTallyHook } from './hooks.js';

export type Scope = 'project' | 'user' | 'managed';

/** The file a scope's settings live in. Managed settings get a drop-in of Tally's own. */
export function settingsPath(scope: Scope, root: string, home: string): string {
  if (scope === 'project') return join(root, '.claude', 'settings.json');
  if (scope === 'user') return join(home, '.claude', 'settings.json');
  return '/etc/claude-code/managed-settings.d/tally.json';
}

/** The hook events the pinned Claude Code accepts (an unknown one is ignored, the rest validated). */
const KNOWN_EVENTS = new Set([
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'PermissionRequest',
  'PermissionDenied',
  'UserPromptSubmit',
  'Notification',
  'Stop',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'SessionStart',
  'SessionEnd',
  'TaskCompleted',
  'TeammateIdle',
]);

/** The hooks block as Claude Code validates it; the first problem is named by its JSON pointer. */
export function checkHooksBlock(hooks: unknown): void {
  checkHookGroups(hooks, KNOWN_EVENTS, 'Claude Code', (h, hp) => {
    if (h.type === 'command') {
      if (typeof h.command !== 'string' || h.command === '')
        badField(`${hp}/command`, 'must be a non-empty string');
    } else if (h.type === 'http') {
      if (typeof h.url !== 'string' || !/^https?:\/\//.test(h.url))
        badField(`${hp}/url`, 'must be an http(s) URL');
      if (h.onFailure !== undefined && h.onFailure !== 'block' && h.onFailure !== 'continue')
        badField(`${hp}/onFailure`, "must be 'block' or 'continue'");
    } else badField(`${hp}/type`, "must be 'command' or 'http'");
    if (h.timeout !== undefined && !(typeof h.timeout === 'number' && h.timeout > 0))
      badField(`${hp}/timeout`, 'must be a positive number of seconds');
  });
}

/** Every hook that is not Tally's, kept in place; groups and events left empty are dropped. */
export function withoutTallyHooks(settings: JsonObject): JsonObject {
  return removeHooks(settings, isTallyHook);
}

/** Settings with Tally's hooks replaced by `ours`; the user's hooks and every other key kept. */
export function withTallyHooks(settings: JsonObject, ours: Record<string, JsonObject[]>): JsonObject {
  const out = mergeHooks(settings, ours, isTallyHook);
  checkHooksBlock(out.hooks);
  return out;
}

export { parseSettings };
