/**
 * Merging Tally's hooks into an agent's settings file, and out again, touching nothing else. Every
 * agent with a Claude-Code-shaped hooks block (`{hooks: {Event: [{matcher?, hooks: [hook]}]}}` —
 * Claude Code, Qwen Code, Gemini CLI, Codex's hooks.json) shares this; each says which hooks are
 * Tally's and checks the block the way its pinned version validates it.
 */
import { isJsonObject, type JsonObject } from '../core/json.js';
import { readRegularFileSync } from '../core/regular-file.js';
import { type JsoncNode, type JsonDialect, plain, readJsonc } from './jsonc.js';
import { editJsonc } from './jsonc-edit.js';
import { CaptureError } from './types.js';

export type HookPredicate = (hook: unknown) => boolean;

/** More than any agent's settings file or Tally's plugin holds. */
const SETTINGS_LIMIT = 16 * 1024 * 1024;

/**
 * An agent's settings file (or plugin) as text, read only when it is a regular file (through its
 * links): a FIFO the agent left there would hold the read forever, and a folder is named as one.
 */
export function readSettingsFile(path: string): string {
  return readRegularFileSync(path, SETTINGS_LIMIT).toString('utf8');
}

/** Every hook that is not Tally's, kept in place; groups and events left empty are dropped. */
export function removeHooks(settings: JsonObject, ours: HookPredicate): JsonObject {
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
          ? { ...group, hooks: group.hooks.filter((h) => !ours(h)) }
          : group,
      )
      .filter((group) => !(isJsonObject(group) && Array.isArray(group.hooks) && group.hooks.length === 0));
    if (kept.length > 0) hooks[event] = kept;
  }
  const out: JsonObject = { ...settings, hooks };
  if (Object.keys(hooks).length === 0) delete out.hooks;
  return out;
}

/** Settings with Tally's hooks replaced by `added`; the user's hooks and every other key kept. */
export function mergeHooks(
  settings: JsonObject,
  added: Record<string, JsonObject[]>,
  ours: HookPredicate,
): JsonObject {
  checkMergeable(settings, Object.keys(added));
  const base = removeHooks(settings, ours);
  const hooks: JsonObject = isJsonObject(base.hooks) ? { ...base.hooks } : {};
  for (const [event, groups] of Object.entries(added)) {
    const existing = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = [...existing, ...groups];
  }
  return { ...base, hooks };
}

/**
 * Refuses a `hooks` key that is not an object, or an event Tally adds to whose value is not an
 * array: merging would replace the user's value, and uninstalling would not bring it back.
 */
export function checkMergeable(settings: JsonObject, events: readonly string[]): void {
  const { hooks } = settings;
  if (hooks === undefined) return;
  if (!isJsonObject(hooks))
    badField('/hooks', 'must be an object of event → hooks; fix it before installing, nothing was changed');
  for (const event of events)
    if (hooks[event] !== undefined && !Array.isArray(hooks[event]))
      badField(`/hooks/${event}`, 'must be an array; fix it before installing, nothing was changed');
}

/** A checker's failure: the field at fault by its JSON pointer. */
export function badField(pointer: string, message: string): never {
  throw new CaptureError('bad-payload', `${pointer}: ${message}`, { pointer });
}

/**
 * The common shape of a hooks block: known events → arrays of `{matcher?, hooks: [...]}`, each
 * hook checked by `hook`. The first problem is named by its JSON pointer.
 */
export function checkHookGroups(
  hooks: unknown,
  events: ReadonlySet<string>,
  agent: string,
  hook: (h: JsonObject, pointer: string) => void,
): void {
  if (!isJsonObject(hooks)) badField('/hooks', 'must be an object of event → matcher groups');
  for (const [event, groups] of Object.entries(hooks as JsonObject)) {
    const at = `/hooks/${event}`;
    if (!events.has(event)) badField(at, `is not a ${agent} hook event`);
    if (!Array.isArray(groups)) badField(at, 'must be an array of matcher groups');
    (groups as unknown[]).forEach((group, i) => {
      if (!isJsonObject(group) || !Array.isArray(group.hooks))
        badField(`${at}/${i}`, 'must be {matcher?, hooks: [...]}');
      const g = group as JsonObject;
      if (g.matcher !== undefined && typeof g.matcher !== 'string')
        badField(`${at}/${i}/matcher`, 'must be a string');
      (g.hooks as unknown[]).forEach((h, j) => {
        const hp = `${at}/${i}/hooks/${j}`;
        if (!isJsonObject(h)) badField(hp, 'must be an object');
        hook(h as JsonObject, hp);
      });
    });
  }
}

const DIALECT_NAMES: Record<JsonDialect, string> = {
  json: 'JSON',
  'json-comments': 'JSON (with comments)',
  jsonc: 'JSON with comments',
};

function readTree(text: string, path: string, dialect: JsonDialect): JsoncNode {
  let root: JsoncNode;
  try {
    root = readJsonc(text, dialect);
  } catch (error) {
    if (!(error instanceof CaptureError)) throw error;
    throw new CaptureError(
      'bad-payload',
      `${path} is not ${DIALECT_NAMES[dialect]} as the agent reads it (${error.message}); fix it before installing, nothing was changed`,
      error.detail,
    );
  }
  if (root.kind !== 'object')
    throw new CaptureError('bad-payload', `${path} is not a JSON object; nothing was changed`);
  return root;
}

/**
 * Parses a settings file's text as the agent reads it (`dialect`); an empty or missing file is
 * `{}`, anything but an object is refused, and so is a key given twice.
 */
export function parseSettings(
  text: string | undefined,
  path: string,
  dialect: JsonDialect = 'json',
): JsonObject {
  if (text === undefined || text.trim() === '') return {};
  return plain(readTree(text, path, dialect)) as JsonObject;
}

/**
 * The settings file's new text: the old one edited in place to hold `value` (every other byte —
 * comments, spacing, order, line ends — kept), or, for a new or empty file, `value` written out.
 */
export function settingsText(
  text: string | undefined,
  value: JsonObject,
  path: string,
  dialect: JsonDialect = 'json',
): string {
  if (text === undefined || text.trim() === '') return `${JSON.stringify(value, null, 2)}\n`;
  const root = readTree(text, path, dialect);
  try {
    return editJsonc(text, root, value, dialect);
  } catch (error) {
    if (!(error instanceof CaptureError)) throw error;
    throw new CaptureError('bad-payload', `${path}: ${error.message}`, error.detail);
  }
}
