/**
 * What in an agent's own settings can stop Tally's hooks from running, or run beside them: every
 * settings file the pinned agent reads for a project (managed or system, user, project, local),
 * the keys that switch hooks off, and the other hooks at the event where Tally judges a call —
 * a hook there can answer "allow" with a rewritten input after Tally allowed the original
 * (Claude Code and Qwen Code `updatedInput`, Gemini CLI's BeforeTool, an OpenCode plugin's
 * `output.args`). Measured on the pinned versions (docs/agents.md, "What can switch the hooks off").
 * This module reads and reports; `tally run` decides what to refuse.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isJsonObject, type JsonObject, jsonErrorMessage } from '../core/json.js';
import { RegularFileError } from '../core/regular-file.js';
import { isTallyHook } from './claude-code/hooks.js';
import { isGeminiTallyHook } from './gemini-cli/hooks.js';
import { readSettingsFile } from './hook-settings.js';
import { plain, readJsonc } from './jsonc.js';
import { isRenderedTallyPlugin } from './opencode/plugin.js';
import { isShimCommand } from './plan.js';
import { isQwenTallyHook } from './qwen-code/hooks.js';
import { CaptureError } from './types.js';

/** Who can write a settings file: the agent (as the user), or an administrator (root-owned). */
export type LayerScope = 'managed' | 'system' | 'system-defaults' | 'user' | 'project' | 'local' | 'flag';

export interface SettingsLayer {
  scope: LayerScope;
  path: string;
  /** How the agent parses it: plain JSON, JSON with comments, TOML (read for one key), plugins. */
  syntax: 'json' | 'jsonc' | 'toml' | 'plugins';
}

export interface HookSwitch {
  path: string;
  scope: LayerScope;
  /** What it is: every hook switched off, Tally's own hook switched off, another hook at the judged event. */
  kind: 'hooks-off' | 'tally-hook-off' | 'other-hook' | 'managed-only';
  /** The key at fault, as a JSON pointer (or the TOML key, or the plugin file's name). */
  key: string;
  /** The other hook's command, URL or file, for `other-hook`. */
  hook?: string;
}

export interface Whereabouts {
  cwd: string;
  /** The project's root (its repository), when it differs from cwd. */
  root: string;
  env: NodeJS.ProcessEnv;
  home: string;
}

/** Project files at cwd and, when it is elsewhere, the project root (Claude Code reads the root's). */
function projectDirs(w: Whereabouts): string[] {
  return [...new Set([resolve(w.cwd), resolve(w.root)])];
}

/** Every settings file the pinned agent reads for this project, highest precedence last where it matters. */
export function settingsLayers(harness: string, w: Whereabouts): SettingsLayer[] {
  const { env, home } = w;
  if (harness === 'claude-code') {
    const managed = '/etc/claude-code';
    const dropins = existsSync(join(managed, 'managed-settings.d'))
      ? readdirSync(join(managed, 'managed-settings.d'))
          .filter((n) => n.endsWith('.json'))
          .sort()
          .map((n) => join(managed, 'managed-settings.d', n))
      : [];
    return [
      {
        scope: 'user',
        path: join(env.CLAUDE_CONFIG_DIR || join(home, '.claude'), 'settings.json'),
        syntax: 'json',
      },
      ...projectDirs(w).flatMap((dir): SettingsLayer[] => [
        { scope: 'project', path: join(dir, '.claude', 'settings.json'), syntax: 'json' },
        { scope: 'local', path: join(dir, '.claude', 'settings.local.json'), syntax: 'json' },
      ]),
      ...[join(managed, 'managed-settings.json'), ...dropins].map(
        (path): SettingsLayer => ({ scope: 'managed', path, syntax: 'json' }),
      ),
    ];
  }
  if (harness === 'gemini-cli' || harness === 'qwen-code') {
    const gemini = harness === 'gemini-cli';
    const system = gemini
      ? env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || '/etc/gemini-cli/settings.json'
      : env.QWEN_CODE_SYSTEM_SETTINGS_PATH || '/etc/qwen-code/settings.json';
    const defaults =
      (gemini ? env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH : env.QWEN_CODE_SYSTEM_DEFAULTS_PATH) ||
      join(system, '..', 'system-defaults.json');
    const user = gemini
      ? join(env.GEMINI_CLI_HOME || home, '.gemini', 'settings.json')
      : join(env.QWEN_HOME || join(home, '.qwen'), 'settings.json');
    // Both read the project file of the directory they start in, and none when that is the home.
    const project =
      resolve(w.cwd) === resolve(home)
        ? []
        : [{ scope: 'project' as const, path: join(w.cwd, gemini ? '.gemini' : '.qwen', 'settings.json') }];
    const layers: { scope: LayerScope; path: string }[] = [
      { scope: 'system-defaults', path: defaults },
      { scope: 'user', path: user },
      ...project,
      { scope: 'system', path: system },
    ];
    return layers.map((l) => ({ ...l, syntax: 'jsonc' }));
  }
  // Codex: the run's hooks are user hooks (in the run's CODEX_HOME); managed requirements can drop
  // them, and `[features] hooks = false` (or its old name codex_hooks) in a config switches them off.
  if (harness === 'codex')
    return [
      { scope: 'user', path: join(env.CODEX_HOME || join(home, '.codex'), 'config.toml'), syntax: 'toml' },
      ...projectDirs(w).map(
        (d): SettingsLayer => ({ scope: 'project', path: join(d, '.codex', 'config.toml'), syntax: 'toml' }),
      ),
      { scope: 'managed', path: '/etc/codex/requirements.toml', syntax: 'toml' },
    ];
  if (harness === 'opencode') {
    const dirs: [LayerScope, string][] = [
      ['user', join(env.XDG_CONFIG_HOME || join(home, '.config'), 'opencode')],
      ...projectDirs(w).map((d): [LayerScope, string] => ['project', join(d, '.opencode')]),
      ...(env.OPENCODE_CONFIG_DIR ? [['user', env.OPENCODE_CONFIG_DIR] as [LayerScope, string]] : []),
    ];
    return dirs.flatMap(([scope, dir]) =>
      ['plugin', 'plugins'].map((p): SettingsLayer => ({ scope, path: join(dir, p), syntax: 'plugins' })),
    );
  }
  return [];
}

/** The events at which another hook could change a call after Tally judged it. */
const JUDGED_EVENTS: Record<string, string[]> = {
  'claude-code': ['PreToolUse', 'PermissionRequest'],
  'qwen-code': ['PreToolUse', 'PermissionRequest'],
  'gemini-cli': ['BeforeTool'],
};

const IS_TALLY: Record<string, (hook: unknown) => boolean> = {
  'claude-code': isTallyHook,
  'qwen-code': isQwenTallyHook,
  'gemini-cli': isGeminiTallyHook,
};

/** Reads a settings file as the agent would; a missing one is null, one the agent cannot read is refused. */
function readSettings(layer: SettingsLayer): JsonObject | null {
  if (!existsSync(layer.path)) return null;
  let text: string;
  try {
    text = readSettingsFile(layer.path);
  } catch (error) {
    throw new CaptureError(
      'bad-payload',
      error instanceof RegularFileError
        ? error.message
        : `${layer.path}: cannot be read (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = layer.syntax === 'jsonc' ? plain(readJsonc(text)) : JSON.parse(text);
  } catch (error) {
    throw new CaptureError(
      'bad-payload',
      `${layer.path} is not ${layer.syntax === 'jsonc' ? 'JSON with comments' : 'JSON'} (${jsonErrorMessage(error)})`,
      { path: layer.path },
    );
  }
  return isJsonObject(value) ? value : null;
}

function hookLabel(hook: unknown): string {
  if (!isJsonObject(hook)) return JSON.stringify(hook);
  const label = hook.command ?? hook.url ?? hook.prompt ?? hook.name ?? hook.type;
  return typeof label === 'string' ? label : JSON.stringify(hook);
}

/** The other hooks at the judged events of a Claude-Code-shaped `hooks` block. */
function otherHooks(harness: string, layer: SettingsLayer, settings: JsonObject): HookSwitch[] {
  const hooks = settings.hooks;
  if (!isJsonObject(hooks)) return [];
  const out: HookSwitch[] = [];
  for (const event of JUDGED_EVENTS[harness] ?? []) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    groups.forEach((group, i) => {
      if (!isJsonObject(group) || !Array.isArray(group.hooks)) return;
      group.hooks.forEach((hook, j) => {
        if (IS_TALLY[harness]?.(hook) !== false) return;
        out.push({
          path: layer.path,
          scope: layer.scope,
          kind: 'other-hook',
          key: `/hooks/${event}/${i}/hooks/${j}`,
          hook: hookLabel(hook),
        });
      });
    });
  }
  return out;
}

/**
 * Codex's keys, read line by line (a TOML table header, then `key = value`): `allow_managed_hooks_only`
 * in the managed requirements, `hooks` (or `codex_hooks`) false under `[features]` in a config.
 */
function tomlSwitches(
  layer: SettingsLayer,
  at: (kind: HookSwitch['kind'], key: string) => HookSwitch,
): HookSwitch[] {
  let table = '';
  const out: HookSwitch[] = [];
  for (const line of readSettingsFile(layer.path).split('\n')) {
    const header = /^\s*\[\s*([^\]]+?)\s*\]/.exec(line);
    if (header) {
      table = header[1]!;
      continue;
    }
    const pair = /^\s*([A-Za-z0-9_.]+)\s*=\s*(true|false)\b/.exec(line);
    if (!pair) continue;
    const key = table ? `${table}.${pair[1]}` : pair[1]!;
    if (layer.scope === 'managed' && key === 'allow_managed_hooks_only' && pair[2] === 'true')
      out.push(at('hooks-off', key));
    if (layer.scope !== 'managed' && /^features\.(codex_)?hooks$/.test(key) && pair[2] === 'false')
      out.push(at('hooks-off', key));
  }
  return out;
}

/** The switches and other hooks of one settings file. */
function switchesOf(harness: string, layer: SettingsLayer): HookSwitch[] {
  const at = (kind: HookSwitch['kind'], key: string): HookSwitch => ({
    path: layer.path,
    scope: layer.scope,
    kind,
    key,
  });
  if (layer.syntax === 'plugins') {
    if (!existsSync(layer.path)) return [];
    return readdirSync(layer.path)
      .filter((name) => /\.(m?[jt]s)$/.test(name))
      .filter((name) => {
        try {
          return !isRenderedTallyPlugin(readSettingsFile(join(layer.path, name)));
        } catch {
          return true;
        }
      })
      .map((name) => ({ ...at('other-hook', name), hook: join(layer.path, name) }));
  }
  if (layer.syntax === 'toml') return existsSync(layer.path) ? tomlSwitches(layer, at) : [];
  const settings = readSettings(layer);
  if (settings === null) return [];
  const out: HookSwitch[] = [];
  if (harness === 'claude-code' || harness === 'qwen-code') {
    if (settings.disableAllHooks === true) out.push(at('hooks-off', '/disableAllHooks'));
    if (harness === 'claude-code' && layer.scope === 'managed' && settings.allowManagedHooksOnly === true)
      out.push(at('managed-only', '/allowManagedHooksOnly'));
  }
  if (harness === 'gemini-cli') {
    const config = settings.hooksConfig;
    if (isJsonObject(config)) {
      if (config.enabled === false) out.push(at('hooks-off', '/hooksConfig/enabled'));
      if (Array.isArray(config.disabled))
        config.disabled.forEach((name, i) => {
          if (isShimCommand(name, 'gemini-cli')) out.push(at('tally-hook-off', `/hooksConfig/disabled/${i}`));
        });
    }
  }
  // Managed hooks are the administrator's, a party Tally trusts (docs/security.md): not reported.
  if (layer.scope !== 'managed' && layer.scope !== 'system')
    out.push(...otherHooks(harness, layer, settings));
  return out;
}

/** Whether a managed settings file holds Tally's hook at PreToolUse (`tally install --scope managed`). */
function managedTallyHook(layers: SettingsLayer[]): boolean {
  return layers
    .filter((l) => l.scope === 'managed' && l.syntax === 'json')
    .some((l) => {
      const hooks = readSettings(l)?.hooks;
      const groups = isJsonObject(hooks) && Array.isArray(hooks.PreToolUse) ? hooks.PreToolUse : [];
      return groups.some((g) => isJsonObject(g) && Array.isArray(g.hooks) && g.hooks.some(isTallyHook));
    });
}

/**
 * Claude Code's `--settings <file or JSON>` in a command: the pinned version keeps only the last one
 * (measured: a second `--settings` dropped the first one's hooks). Returns that one's settings and
 * where they came from, and the command without any `--settings`, so the run can pass one file with
 * the user's settings and its own hooks together.
 */
export function claudeFlagSettings(
  argv: readonly string[],
  cwd: string,
): { settings?: JsonObject; source?: string; rest: string[] } {
  const rest: string[] = [];
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--settings' && i + 1 < argv.length) value = argv[++i];
    else if (arg.startsWith('--settings=')) value = arg.slice('--settings='.length);
    else rest.push(arg);
  }
  if (value === undefined) return { rest };
  const inline = value.trim().startsWith('{');
  const source = inline ? '--settings (inline JSON)' : resolve(cwd, value);
  const settings = inline
    ? parseFlagJson(value, source)
    : readSettings({ scope: 'flag', path: source, syntax: 'json' });
  if (settings === null && !inline)
    throw new CaptureError('bad-payload', `--settings ${source}: no such file, or not a JSON object`, {
      path: source,
    });
  return { ...(settings ? { settings } : {}), source, rest };
}

function parseFlagJson(text: string, source: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CaptureError('bad-payload', `${source} is not JSON (${jsonErrorMessage(error)})`);
  }
  if (!isJsonObject(value)) throw new CaptureError('bad-payload', `${source} is not a JSON object`);
  return value;
}

/** The switches and other hooks of the settings a Claude Code command passes with `--settings`. */
function flagSwitches(harness: string, argv: readonly string[], cwd: string): HookSwitch[] {
  if (harness !== 'claude-code') return [];
  const { settings, source } = claudeFlagSettings(argv.slice(1), cwd);
  if (!settings || !source) return [];
  const layer: SettingsLayer = { scope: 'flag', path: source, syntax: 'json' };
  const off: HookSwitch[] =
    settings.disableAllHooks === true
      ? [{ path: source, scope: 'flag', kind: 'hooks-off', key: '/disableAllHooks' }]
      : [];
  return [...off, ...otherHooks(harness, layer, settings)];
}

/**
 * Every switch and other hook in the settings the pinned agent will read for this project. Claude
 * Code's managed `allowManagedHooksOnly` drops the run's own hooks (they are not managed): it
 * switches hooks off for the run unless Tally's managed hooks are installed, which then report
 * into the run's session.
 */
export function hookSwitches(harness: string, w: Whereabouts, argv: readonly string[] = []): HookSwitch[] {
  const layers = settingsLayers(harness, w);
  const found = [
    ...layers.flatMap((layer) => switchesOf(harness, layer)),
    ...flagSwitches(harness, argv, w.cwd),
  ];
  const managedOnly = found.filter((s) => s.kind === 'managed-only');
  const rest = found.filter((s) => s.kind !== 'managed-only');
  if (managedOnly.length === 0 || managedTallyHook(layers)) return rest;
  return [...managedOnly.map((s) => ({ ...s, kind: 'hooks-off' as const })), ...rest];
}

/**
 * Environment variables and arguments with which the pinned agent runs no hook at all (Claude
 * Code and Qwen Code `--bare` / `--safe-mode` and their variables).
 */
export function hookSwitchesInCommand(
  harness: string,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): string[] {
  const found: string[] = [];
  const variables: Record<string, string[]> = {
    'claude-code': ['CLAUDE_CODE_SIMPLE', 'CLAUDE_CODE_SAFE_MODE'],
    'qwen-code': ['QWEN_CODE_SIMPLE', 'QWEN_CODE_SAFE_MODE'],
  };
  for (const name of variables[harness] ?? []) {
    const value = env[name];
    if (value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false')
      found.push(`the environment variable ${name}=${value}`);
  }
  if (harness === 'claude-code' || harness === 'qwen-code')
    for (const arg of argv.slice(1))
      if (arg === '--bare' || arg === '--safe-mode') found.push(`the argument ${arg}`);
  return found;
}
