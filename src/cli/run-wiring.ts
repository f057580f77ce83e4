/**
 * How `tally run` wires an agent's hooks for one run without editing the user's files. Claude
 * Code takes `--settings <file>`. Gemini CLI, Qwen Code and Codex take their config home from an
 * environment variable (`GEMINI_CLI_HOME`, `QWEN_HOME`, `CODEX_HOME`): the run gets a config home
 * of its own in the session's directory whose hooks file is the user's with Tally's hooks merged
 * in, and whose every other entry is a link to the user's own (credentials, history, memory).
 * What the agent created there during the run is moved back afterwards. Codex keeps hook trust in
 * config.toml, so the run gets a copy of the user's, in which Codex itself records the trust of
 * this run's hooks. The run puts the recorder's secret and the session in the agent's environment,
 * so an agent with http hooks (Qwen Code) gets them where its failure policy allows. (A system settings file would need no copying, but Gemini CLI skips one whose
 * directories are not all root-owned and closed to others, which a session directory is not.)
 */

import { randomUUID } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Registration } from '../ahp/registration/types.js';
import { withTallyHooks } from '../capture/claude-code/settings.js';
import { parseSettings, readSettingsFile } from '../capture/hook-settings.js';
import { claudeFlagSettings } from '../capture/hook-switches.js';
import { isShimCommand } from '../capture/plan.js';
import { isJsonObject, type JsonObject } from '../core/json.js';
import { FailureError } from './command.js';
import { type HookWiring, INSTALLERS } from './installers.js';

export interface RunWiring {
  argv: string[];
  env: Record<string, string>;
  /** Undoes what the wiring set up, after the agent exited. */
  restore: () => void;
}

interface ConfigHome {
  variable: string;
  /** The user's config directory. */
  dir: (env: NodeJS.ProcessEnv) => string;
  /** The config directory inside what the variable names ('' when it names the directory itself). */
  inner: string;
  /** The file holding the hooks. */
  hooks: string;
  /** Files copied rather than linked (the agent writes to them for this run). */
  copied?: string[];
}

const CONFIG_HOMES: Record<string, ConfigHome> = {
  // GEMINI_CLI_HOME stands for the home directory: the config is its `.gemini`.
  'gemini-cli': {
    variable: 'GEMINI_CLI_HOME',
    dir: (env) => join(env.GEMINI_CLI_HOME || env.HOME || '', '.gemini'),
    inner: '.gemini',
    hooks: 'settings.json',
  },
  'qwen-code': {
    variable: 'QWEN_HOME',
    dir: (env) => env.QWEN_HOME || join(env.HOME || '', '.qwen'),
    inner: '',
    hooks: 'settings.json',
  },
  codex: {
    variable: 'CODEX_HOME',
    dir: (env) => env.CODEX_HOME || join(env.HOME || '', '.codex'),
    inner: '',
    hooks: 'hooks.json',
    copied: ['config.toml'],
  },
};

/** The run's config home: links to every entry of the user's but the files of its own, written anew. */
function overlay(userDir: string, runDir: string, own: Record<string, string>): void {
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  if (existsSync(userDir))
    for (const name of readdirSync(userDir))
      if (!Object.hasOwn(own, name)) symlinkSync(join(userDir, name), join(runDir, name));
  for (const [name, text] of Object.entries(own)) writeFileSync(join(runDir, name), text, { mode: 0o600 });
}

/** What the agent created in the run's config home goes back to the user's; the rest is dropped. */
function unlay(userDir: string, runDir: string, own: Record<string, string>): void {
  if (!existsSync(runDir)) return;
  for (const name of readdirSync(runDir)) {
    const at = join(runDir, name);
    if (Object.hasOwn(own, name) || lstatSync(at).isSymbolicLink()) continue;
    mkdirSync(userDir, { recursive: true });
    if (!existsSync(join(userDir, name))) renameSync(at, join(userDir, name));
  }
}

/**
 * The user's settings with hooks switched on, for the run's own copy (it replaces the user's file,
 * and beats the system defaults): Gemini CLI's `hooksConfig.enabled` and its `disabled` list
 * without Tally's hooks, Qwen Code's `disableAllHooks`.
 */
function hooksOn(harness: string, settings: JsonObject): JsonObject {
  if (harness === 'qwen-code') return { ...settings, disableAllHooks: false };
  if (harness !== 'gemini-cli') return settings;
  const config = isJsonObject(settings.hooksConfig) ? settings.hooksConfig : {};
  const disabled = Array.isArray(config.disabled)
    ? { disabled: config.disabled.filter((name) => !isShimCommand(name, 'gemini-cli')) }
    : {};
  return { ...settings, hooksConfig: { ...config, ...disabled, enabled: true } };
}

/**
 * The run's copy of Codex's config.toml with its hooks feature on: `hooks` (or its old name
 * `codex_hooks`) false under `[features]`, or `features.hooks = false`, turned true line by line
 * (Codex's own trust step reads this copy too, so the command line's override is not enough).
 */
function codexHooksOn(text: string): string {
  let table = '';
  return text
    .split('\n')
    .map((line) => {
      const header = /^\s*\[\s*([^\]]+?)\s*\]/.exec(line);
      if (header) table = header[1]!;
      const key = /^(\s*)([A-Za-z0-9_.]+)(\s*=\s*)false\b/.exec(line);
      if (header || !key) return line;
      const full = table ? `${table}.${key[2]}` : key[2]!;
      return /^features\.(codex_)?hooks$/.test(full) ? line.replace(/=(\s*)false\b/, '=$1true') : line;
    })
    .join('\n');
}

/**
 * Claude Code's session id for the run when the command does not choose one (or resume one), and
 * the transcript the pinned version then writes: `<config dir>/projects/<cwd, every character but
 * letters and digits as '-'>/<id>.jsonl`. Known before the agent starts, the transcript is read at
 * close even when no hook ever named it.
 */
export function claudeSession(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): { id: string; transcript: string } | undefined {
  const chosen = new Set(['--session-id', '--resume', '-r', '--continue', '-c', '--fork-session']);
  if (argv.some((arg) => chosen.has(arg.split('=')[0]!))) return undefined;
  const id = randomUUID();
  const config = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');
  return { id, transcript: join(config, 'projects', claudeProjectFolder(cwd), `${id}.jsonl`) };
}

/** The longest project folder name the pinned Claude Code keeps whole. */
const FOLDER_KEPT = 200;

/**
 * The folder the pinned Claude Code keeps a project's transcripts in: the cwd with every UTF-16 unit
 * but letters and digits as '-'; past 200 characters, the first 200, '-', and the base-36 absolute
 * value of the 32-bit string hash of the cwd (h = h * 31 + unit, each unit in turn).
 */
export function claudeProjectFolder(cwd: string): string {
  const name = cwd.replace(/[^A-Za-z0-9]/g, '-');
  if (name.length <= FOLDER_KEPT) return name;
  let hash = 0;
  for (let i = 0; i < cwd.length; i++) hash = (Math.imul(hash, 31) + cwd.charCodeAt(i)) | 0;
  return `${name.slice(0, FOLDER_KEPT)}-${Math.abs(hash).toString(36)}`;
}

/** What `tally run` wires for an agent: its hooks block, or OpenCode's plugin. */
export type RunHooks = { block: Record<string, JsonObject[]> } | { plugin: string };

/**
 * The hooks `tally run` wires for `harness`: http hooks wherever the agent has them (Claude Code,
 * Qwen Code), command hooks otherwise, OpenCode's plugin. The null-hook benchmarks derive their
 * hook sets from this too.
 */
export function runHooks(
  harness: string,
  registration: Registration | null,
  wiring: Omit<HookWiring, 'transport'>,
): RunHooks {
  const installer = INSTALLERS[harness]!;
  if (installer.wholeFile)
    return { plugin: installer.wholeFile.render(registration, { ...wiring, transport: 'command' }) };
  const transport = installer.transports.includes('http') ? 'http' : 'command';
  return { block: installer.hooks(registration, { ...wiring, transport }) };
}

export async function wireRun(
  harness: string,
  agentArgv: string[],
  options: {
    dir: string;
    registration: Registration | null;
    port: number;
    tally: string;
    sh?: string;
    env: NodeJS.ProcessEnv;
    cwd: string;
    agent?: string;
    /** Claude Code: the session id the run gives the agent (`--session-id`). */
    harnessSession?: string;
  },
): Promise<RunWiring> {
  const installer = INSTALLERS[harness]!;
  const hooks = runHooks(harness, options.registration, {
    port: options.port,
    tally: options.tally,
    ...(options.sh ? { sh: options.sh } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
  });
  if ('plugin' in hooks) return openCodeWiring(agentArgv, options, hooks.plugin);
  if (harness === 'claude-code') {
    const settings = join(options.dir, 'claude-code-settings.json');
    // Claude Code keeps only the last --settings: the user's own (if any) goes into this one file.
    // `disableAllHooks: false` here beats the key in every settings file but the managed ones.
    const given = claudeFlagSettings(agentArgv.slice(1), options.cwd);
    const merged = { ...withTallyHooks(given.settings ?? {}, hooks.block), disableAllHooks: false };
    writeFileSync(settings, `${JSON.stringify(merged, null, 2)}\n`, { mode: 0o600 });
    const id = options.harnessSession ? ['--session-id', options.harnessSession] : [];
    return {
      argv: [agentArgv[0]!, '--settings', settings, ...id, ...given.rest],
      env: {},
      restore: () => {},
    };
  }
  const home = CONFIG_HOMES[harness]!;
  const userDir = home.dir(options.env);
  const userHooks = join(userDir, home.hooks);
  const base = parseSettings(
    existsSync(userHooks) ? readSettingsFile(userHooks) : undefined,
    userHooks,
    installer.dialect,
  );
  const merged = installer.merge(hooksOn(harness, base), hooks.block);
  const own: Record<string, string> = { [home.hooks]: `${JSON.stringify(merged, null, 2)}\n` };
  for (const name of home.copied ?? [])
    own[name] = existsSync(join(userDir, name)) ? readSettingsFile(join(userDir, name)) : '';
  if (own['config.toml'] !== undefined) own['config.toml'] = codexHooksOn(own['config.toml']);
  const runHome = join(options.dir, `${harness}-home`);
  const runDir = home.inner ? join(runHome, home.inner) : runHome;
  overlay(userDir, runDir, own);
  const restore = () => {
    unlay(userDir, runDir, own);
    rmSync(runHome, { recursive: true, force: true });
  };
  const env = { [home.variable]: runHome };
  if (installer.afterWrite) {
    const after = await installer
      .afterWrite(join(runDir, home.hooks), {
        bin: agentArgv[0]!,
        scope: 'user',
        hooks: hooks.block,
        env: { ...options.env, ...env },
        cwd: options.cwd,
      })
      .catch((error: Error) => {
        restore();
        throw error;
      });
    if (after.trust === 'untrusted') {
      restore();
      throw new FailureError(
        `${installer.label} would not trust this run's hooks: it would skip them without a word`,
      );
    }
  }
  // Codex: its hooks feature on for this run, whatever a config file says (the command line wins).
  const argv =
    harness === 'codex' ? [agentArgv[0]!, '-c', 'features.hooks=true', ...agentArgv.slice(1)] : agentArgv;
  return { argv, env, restore };
}

/**
 * OpenCode loads plugins from every config directory it reads, `OPENCODE_CONFIG_DIR` among them:
 * the run names one of its own holding Tally's plugin (and, when the user had named one, links to
 * everything in it, their plugins included).
 */
function openCodeWiring(
  agentArgv: string[],
  options: { dir: string; env: NodeJS.ProcessEnv },
  plugin: string,
): RunWiring {
  const runDir = join(options.dir, 'opencode-config');
  const user = options.env.OPENCODE_CONFIG_DIR;
  mkdirSync(join(runDir, 'plugin'), { recursive: true, mode: 0o700 });
  if (user && existsSync(user))
    for (const name of readdirSync(user)) {
      if (name !== 'plugin') symlinkSync(join(user, name), join(runDir, name));
      else
        for (const p of readdirSync(join(user, name)))
          symlinkSync(join(user, name, p), join(runDir, 'plugin', p));
    }
  writeFileSync(join(runDir, 'plugin', 'tally-run.js'), plugin, { mode: 0o600 });
  return {
    argv: agentArgv,
    env: { OPENCODE_CONFIG_DIR: runDir },
    restore: () => rmSync(runDir, { recursive: true, force: true }),
  };
}
