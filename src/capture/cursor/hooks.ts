/**
 * Cursor's `hooks.json` (`{version: 1, hooks: {event: [{command}]}}`, flat lists, no matcher
 * groups): one command hook per covered event, each the `tally hook cursor` shim; the user's
 * entries and keys kept. Files: `.cursor/hooks.json` (project), `~/.cursor/hooks.json` (user).
 */
import { join } from 'node:path';
import type { Registration } from '../../ahp/registration/types.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { badField, checkMergeable } from '../hook-settings.js';
import {
  isShimCommand,
  type NativeEventSpec,
  type NativeHookPlan,
  planNativeHooks,
  shimCommand,
} from '../plan.js';
import { CURSOR_EVENTS, type CursorEvent } from './translate.js';

const AHP: Record<CursorEvent, string> = {
  beforeSubmitPrompt: 'turn.start',
  beforeShellExecution: 'tool.before',
  beforeMCPExecution: 'tool.before',
  beforeReadFile: 'tool.before',
  afterShellExecution: 'tool.after',
  afterMCPExecution: 'tool.after',
  afterFileEdit: 'tool.after',
  stop: 'turn.end',
};

const SPECS = Object.fromEntries(
  (Object.keys(CURSOR_EVENTS) as CursorEvent[]).map((e) => [e, { ahp: AHP[e] }]),
) as Record<CursorEvent, NativeEventSpec>;

export function planCursorHooks(registration: Registration): NativeHookPlan<CursorEvent>[] {
  return planNativeHooks(registration, SPECS);
}

export function cursorHooks(
  plans: readonly NativeHookPlan[],
  tally: string,
  agent?: string,
  sh?: string,
): Record<string, JsonObject[]> {
  return Object.fromEntries(
    plans.map((p) => [p.event, [{ command: shimCommand(tally, 'cursor', p.failClosed, agent, sh) }]]),
  );
}

const isOurs = (hook: unknown) => isJsonObject(hook) && isShimCommand(hook.command, 'cursor');

export function withoutCursorTallyHooks(file: JsonObject): JsonObject {
  if (!isJsonObject(file.hooks)) return file;
  const hooks: JsonObject = {};
  for (const [event, list] of Object.entries(file.hooks)) {
    const kept = Array.isArray(list) ? list.filter((h) => !isOurs(h)) : list;
    if (!Array.isArray(kept) || kept.length > 0) hooks[event] = kept;
  }
  return { ...file, hooks };
}

export function withCursorTallyHooks(file: JsonObject, ours: Record<string, JsonObject[]>): JsonObject {
  checkMergeable(file, Object.keys(ours));
  const base = withoutCursorTallyHooks(file);
  const hooks: JsonObject = isJsonObject(base.hooks) ? { ...base.hooks } : {};
  for (const [event, list] of Object.entries(ours))
    hooks[event] = [
      ...(Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : []),
      ...list,
    ] as JsonObject[];
  const out: JsonObject = { ...base, version: base.version ?? 1, hooks };
  checkCursorHooks(out);
  return out;
}

/** The documented shape: `version` 1, every event a list of `{command}` entries. */
export function checkCursorHooks(file: JsonObject): void {
  if (file.version !== 1) badField('/version', 'must be 1');
  if (!isJsonObject(file.hooks)) badField('/hooks', 'must be an object of event → hook list');
  for (const [event, list] of Object.entries(file.hooks as JsonObject)) {
    if (!Array.isArray(list)) badField(`/hooks/${event}`, 'must be an array of hooks');
    (list as unknown[]).forEach((h, i) => {
      const at = `/hooks/${event}/${i}`;
      if (!isJsonObject(h)) badField(at, 'must be an object');
      const hook = h as JsonObject;
      if (hook.type !== 'prompt' && (typeof hook.command !== 'string' || hook.command === ''))
        badField(`${at}/command`, 'must be a non-empty string');
    });
  }
}

export function cursorHooksPath(scope: 'project' | 'user' | 'managed', root: string, home: string): string {
  return scope === 'project' ? join(root, '.cursor', 'hooks.json') : join(home, '.cursor', 'hooks.json');
}
