/**
 * How `tally run` wires an agent's hooks for one run without editing the user's files. Claude
 * Code takes `--settings <file>`. Gemini CLI and Qwen Code take their config home from an
 * environment variable (`GEMINI_CLI_HOME`, `QWEN_HOME`): the run gets a config home of its own in
 * the session's directory whose settings file is the user's with Tally's hooks merged in, and
 * whose every other entry is a link to the user's own (credentials, history, memory). What the
 * agent created there during the run is moved back afterwards. (Their system settings file would
 * need no copying, but Gemini CLI skips one whose directories are not all root-owned and
 * unwritable by others, which a session directory is not.)
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Registration } from '../ahp/registration/types.js';
import { parseSettings } from '../capture/hook-settings.js';
import { INSTALLERS } from './installers.js';

export interface RunWiring {
  argv: string[];
  env: Record<string, string>;
  /** Undoes what the wiring set up, after the agent exited. */
  restore: () => void;
}

/** Each agent's config home: the variable that moves it, and where it is by default. */
const CONFIG_HOMES: Record<
  string,
  { variable: string; dir: (env: NodeJS.ProcessEnv) => string; inner: string }
> = {
  // GEMINI_CLI_HOME stands for the home directory: the config is its `.gemini`.
  'gemini-cli': {
    variable: 'GEMINI_CLI_HOME',
    dir: (env) => join(env.GEMINI_CLI_HOME || env.HOME || '', '.gemini'),
    inner: '.gemini',
  },
  // QWEN_HOME is the config directory itself.
  'qwen-code': {
    variable: 'QWEN_HOME',
    dir: (env) => env.QWEN_HOME || join(env.HOME || '', '.qwen'),
    inner: '',
  },
};

/** The run's config home: links to every entry of the user's but the settings file, written anew. */
function overlay(userDir: string, runDir: string, settings: string): void {
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  if (existsSync(userDir))
    for (const name of readdirSync(userDir))
      if (name !== 'settings.json') symlinkSync(join(userDir, name), join(runDir, name));
  writeFileSync(join(runDir, 'settings.json'), settings, { mode: 0o600 });
}

/** What the agent created in the run's config home goes back to the user's; the rest is dropped. */
function unlay(userDir: string, runDir: string): void {
  if (!existsSync(runDir)) return;
  for (const name of readdirSync(runDir)) {
    const at = join(runDir, name);
    if (name === 'settings.json' || lstatSync(at).isSymbolicLink()) continue;
    mkdirSync(userDir, { recursive: true });
    if (!existsSync(join(userDir, name))) renameSync(at, join(userDir, name));
  }
  rmSync(runDir, { recursive: true, force: true });
}

export function wireRun(
  harness: string,
  agentArgv: string[],
  options: {
    dir: string;
    registration: Registration | null;
    port: number;
    tally: string;
    env: NodeJS.ProcessEnv;
    agent?: string;
  },
): RunWiring {
  const installer = INSTALLERS[harness]!;
  const wiring = {
    port: options.port,
    tally: options.tally,
    ...(options.agent ? { agent: options.agent } : {}),
  };
  if (harness === 'claude-code') {
    const settings = join(options.dir, 'claude-code-settings.json');
    const hooks = installer.hooks(options.registration, { ...wiring, transport: 'http' });
    writeFileSync(settings, `${JSON.stringify({ hooks }, null, 2)}\n`, { mode: 0o600 });
    return {
      argv: [agentArgv[0]!, '--settings', settings, ...agentArgv.slice(1)],
      env: {},
      restore: () => {},
    };
  }
  const home = CONFIG_HOMES[harness]!;
  const userDir = home.dir(options.env);
  const userSettings = join(userDir, 'settings.json');
  const base = parseSettings(
    existsSync(userSettings) ? readFileSync(userSettings, 'utf8') : undefined,
    userSettings,
  );
  const merged = installer.merge(
    base,
    installer.hooks(options.registration, { ...wiring, transport: 'command' }),
  );
  const runHome = join(options.dir, `${harness}-home`);
  const runDir = home.inner ? join(runHome, home.inner) : runHome;
  overlay(userDir, runDir, `${JSON.stringify(merged, null, 2)}\n`);
  return {
    argv: agentArgv,
    env: { [home.variable]: runHome },
    restore: () => {
      unlay(userDir, runDir);
      rmSync(runHome, { recursive: true, force: true });
    },
  };
}
