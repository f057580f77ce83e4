/**
 * The Gemini CLI hooks that make Tally capture and control a session: one command hook per
 * covered native event (Gemini has no http hooks), each the `tally hook gemini-cli` shim, its
 * `timeout` in milliseconds (Gemini's unit). Settings files: project `.gemini/settings.json`, user
 * `~/.gemini/settings.json`, system `/etc/gemini-cli/settings.json` (or
 * `GEMINI_CLI_SYSTEM_SETTINGS_PATH`), which overrides the other two.
 */
import { join } from 'node:path';
import type { Registration } from '../../ahp/registration/types.js';
import type { JsonObject } from '../../core/json.js';
import { badField, checkHookGroups, mergeHooks, removeHooks } from '../hook-settings.js';
import {
  isShimCommand,
  type NativeEventSpec,
  type NativeHookPlan,
  planNativeHooks,
  type ShimHookOptions,
  shimHooksBlock,
} from '../plan.js';
import { GEMINI_CLI_EVENTS, type GeminiCliEvent } from './translate.js';

const AHP: Record<GeminiCliEvent, string> = {
  SessionStart: 'session.start',
  BeforeAgent: 'turn.start',
  BeforeTool: 'tool.before',
  AfterTool: 'tool.after',
  AfterAgent: 'turn.end',
  PreCompress: 'context.compact.before',
  Notification: 'user.attention',
  SessionEnd: 'session.end',
};

export const GEMINI_CLI_SPECS = Object.fromEntries(
  (Object.keys(GEMINI_CLI_EVENTS) as GeminiCliEvent[]).map((e) => [
    e,
    { ahp: AHP[e], tool: e === 'BeforeTool' || e === 'AfterTool' },
  ]),
) as Record<GeminiCliEvent, NativeEventSpec>;

export function planGeminiCliHooks(registration: Registration): NativeHookPlan<GeminiCliEvent>[] {
  return planNativeHooks(registration, GEMINI_CLI_SPECS);
}

/**
 * The pinned Gemini CLI fires PreCompress with trigger `auto` before every model turn, before it
 * checks whether the history is long enough to compress; only `manual` (/compress) says a
 * compression happens. Tally's PreCompress hook matches that trigger alone: a process per model
 * turn saved, and no `context.compact.before` recorded for a compression that did not happen.
 */
export const PRE_COMPRESS_MATCHER = 'manual';

/** The hooks block: the shim for every planned event, PreCompress for a manual compression only. */
export function geminiCliHooks(
  plans: readonly NativeHookPlan<GeminiCliEvent>[],
  options: Omit<ShimHookOptions, 'channel' | 'timeoutUnit'>,
): Record<string, JsonObject[]> {
  const block = shimHooksBlock(plans, { ...options, channel: 'gemini-cli', timeoutUnit: 'ms' });
  if (block.PreCompress)
    block.PreCompress = block.PreCompress.map((g) => ({ ...g, matcher: PRE_COMPRESS_MATCHER }));
  return block;
}

/** Every event name the pinned Gemini CLI knows (an installer writes only these). */
const KNOWN_EVENTS = new Set([
  ...Object.keys(GEMINI_CLI_EVENTS),
  'BeforeModel',
  'AfterModel',
  'BeforeToolSelection',
]);

export function isGeminiTallyHook(hook: unknown): boolean {
  return (
    typeof hook === 'object' && hook !== null && isShimCommand((hook as JsonObject).command, 'gemini-cli')
  );
}

/** The hooks block as the pinned Gemini CLI takes it: command hooks, timeouts in milliseconds. */
export function checkGeminiHooks(hooks: unknown): void {
  checkHookGroups(hooks, KNOWN_EVENTS, 'Gemini CLI', (h, hp) => {
    if (h.type !== 'command') badField(`${hp}/type`, "must be 'command' (Gemini CLI has no http hooks)");
    if (typeof h.command !== 'string' || h.command === '')
      badField(`${hp}/command`, 'must be a non-empty string');
    if (h.timeout !== undefined && !(typeof h.timeout === 'number' && h.timeout > 0))
      badField(`${hp}/timeout`, 'must be a positive number of milliseconds');
  });
}

export function withGeminiTallyHooks(settings: JsonObject, ours: Record<string, JsonObject[]>): JsonObject {
  const out = mergeHooks(settings, ours, isGeminiTallyHook);
  checkGeminiHooks(out.hooks);
  return out;
}

export function withoutGeminiTallyHooks(settings: JsonObject): JsonObject {
  return removeHooks(settings, isGeminiTallyHook);
}

export type GeminiScope = 'project' | 'user' | 'managed';

export function geminiSettingsPath(
  scope: GeminiScope,
  root: string,
  home: string,
  env: NodeJS.ProcessEnv,
): string {
  if (scope === 'project') return join(root, '.gemini', 'settings.json');
  if (scope === 'user') return join(home, '.gemini', 'settings.json');
  return env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || '/etc/gemini-cli/settings.json';
}
