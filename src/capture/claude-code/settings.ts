/**
 * Claude Code settings files: where each scope keeps them, and merging Tally's hooks in (and out)
 * without touching anything else. Claude Code drops a whole settings file silently when any part
 * of it fails its validation (test/agents/README.md), so what is written is checked here against
 * the hook shapes the pinned version accepts before it is written, and an existing file that is
 * not a JSON object is refused rather than overwritten.
 */
import { join } from 'node:path';
import { isJsonObject, type JsonObject, jsonErrorMessage } from '../../core/json.js';
import { CaptureError } from '../types.js';
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
  const fail = (pointer: string, message: string): never => {
    throw new CaptureError('bad-payload', `${pointer}: ${message}`, { pointer });
  };
  if (!isJsonObject(hooks)) fail('/hooks', 'must be an object of event → matcher groups');
  for (const [event, groups] of Object.entries(hooks as JsonObject)) {
    const at = `/hooks/${event}`;
    if (!KNOWN_EVENTS.has(event)) fail(at, 'is not a Claude Code hook event');
    if (!Array.isArray(groups)) fail(at, 'must be an array of matcher groups');
    (groups as unknown[]).forEach((group, i) => {
      if (!isJsonObject(group) || !Array.isArray(group.hooks))
        fail(`${at}/${i}`, 'must be {matcher?, hooks: [...]}');
      const g = group as JsonObject;
      if (g.matcher !== undefined && typeof g.matcher !== 'string')
        fail(`${at}/${i}/matcher`, 'must be a string');
      (g.hooks as unknown[]).forEach((hook, j) => {
        const hp = `${at}/${i}/hooks/${j}`;
        if (!isJsonObject(hook)) fail(hp, 'must be an object');
        const h = hook as JsonObject;
        if (h.type === 'command') {
          if (typeof h.command !== 'string' || h.command === '')
            fail(`${hp}/command`, 'must be a non-empty string');
        } else if (h.type === 'http') {
          if (typeof h.url !== 'string' || !/^https?:\/\//.test(h.url))
            fail(`${hp}/url`, 'must be an http(s) URL');
          if (h.onFailure !== undefined && h.onFailure !== 'block' && h.onFailure !== 'continue')
            fail(`${hp}/onFailure`, "must be 'block' or 'continue'");
        } else fail(`${hp}/type`, "must be 'command' or 'http'");
        if (h.timeout !== undefined && !(typeof h.timeout === 'number' && h.timeout > 0))
          fail(`${hp}/timeout`, 'must be a positive number of seconds');
      });
    });
  }
}

/** Every hook that is not Tally's, kept in place; groups and events left empty are dropped. */
export function withoutTallyHooks(settings: JsonObject): JsonObject {
  if (!isJsonObject(settings.hooks)) return settings;
  const hooks: JsonObject = {};
  for (const [event, groups] of Object.entries(settings.hooks)) {
    if (!Array.isArray(groups)) {
      hooks[event] = groups;
      continue;
    }
    const kept = groups
      .map((group) =>
        isJsonObject(group) && Array.isArray(group.hooks)
          ? { ...group, hooks: group.hooks.filter((h) => !isTallyHook(h)) }
          : group,
      )
      .filter((group) => !(isJsonObject(group) && Array.isArray(group.hooks) && group.hooks.length === 0));
    if (kept.length > 0) hooks[event] = kept;
  }
  const out: JsonObject = { ...settings, hooks };
  if (Object.keys(hooks).length === 0) delete out.hooks;
  return out;
}

/** Settings with Tally's hooks replaced by `ours`; the user's hooks and every other key kept. */
export function withTallyHooks(settings: JsonObject, ours: Record<string, JsonObject[]>): JsonObject {
  const base = withoutTallyHooks(settings);
  const hooks: JsonObject = isJsonObject(base.hooks) ? { ...base.hooks } : {};
  for (const [event, groups] of Object.entries(ours)) {
    const existing = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = [...existing, ...groups];
  }
  const out = { ...base, hooks };
  checkHooksBlock(out.hooks);
  return out;
}

/** Parses a settings file's text; an empty or missing file is `{}`, anything but an object is refused. */
export function parseSettings(text: string | undefined, path: string): JsonObject {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CaptureError(
      'bad-payload',
      `${path} is not JSON (${jsonErrorMessage(error)}); fix it before installing, nothing was changed`,
    );
  }
  if (!isJsonObject(value))
    throw new CaptureError('bad-payload', `${path} is not a JSON object; nothing was changed`);
  return value;
}
