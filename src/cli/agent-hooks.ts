/**
 * What `tally install` and `tally run` both need for an agent: the registration the recorder
 * will dispatch (the project's, with Tally's certificate judge in it), the hook plan derived from
 * it, and how the command shim is invoked from the agent's shell.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { parseRegistrationText, RegistrationError } from '../ahp/registration/registration.js';
import type { Registration } from '../ahp/registration/types.js';
import { projectRegistrationPath } from '../session/lifecycle.js';
import { type Places, projectRootFor } from '../session/paths.js';
import { writeAtomic } from '../session/store.js';
import { type CommandContext, UsageError } from './command.js';
import { INSTALLERS, type Installer, type InstallScope } from './installers.js';
import { placesOf } from './session-context.js';
import { TALLY_BIN } from './tally-bin.js';

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** `tally` as a shell command that works without it on the PATH: node and the bin, quoted. */
export function tallyCommand(): string {
  return `${quote(process.execPath)} ${quote(TALLY_BIN)}`;
}

/**
 * Refuses, before anything is written, a settings file its owner made read-only (a file without its
 * owner's write bit, through a symlink the file it names): a replace by rename would go through
 * where a write would not, and undo the owner's choice.
 */
export function assertWritableSettings(path: string): void {
  if (!existsSync(path)) return;
  const target = realpathSync(path);
  const mode = statSync(target).mode & 0o777;
  if ((mode & 0o200) === 0)
    throw new UsageError(
      `${target} is read-only (mode ${mode.toString(8).padStart(4, '0')}); nothing was written. Make it writable (chmod u+w) to let Tally edit it, or use --dry-run to see what it would write`,
    );
}

/**
 * Writes an agent's settings file the user may already have: through a symlink to the file it
 * names (a link into the user's dotfiles stays a link), and with the file's own mode; a new file
 * gets `mode`. A read-only file is refused (assertWritableSettings).
 */
export function writeSettingsFile(path: string, text: string, mode: number): void {
  if (!existsSync(path)) writeAtomic(path, text, mode);
  else {
    assertWritableSettings(path);
    const target = realpathSync(path);
    writeAtomic(target, text, statSync(target).mode & 0o777);
  }
}

/** Makes the folder a settings file goes in; a file in its way is named, not a stack trace. */
export function makeFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new UsageError(
      `${dir}: cannot make this folder (${(error as NodeJS.ErrnoException).code}: a file of that name or on its way is in the way); nothing was written`,
    );
  }
}

/** True when `program` is an executable file in one of `path`'s directories. */
function onPath(program: string, path: string | undefined): boolean {
  return (path ?? '').split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const BASH = '/bin/bash';

/**
 * True when /bin/bash can run the shim's /dev/tcp half: bin/tally-hook.bash sources (it refuses a
 * bash older than 4.1, which has no `read -N`) and bash opens `/dev/tcp` connections (a build
 * option): a connection to a port nothing listens on is refused, where a bash without them cannot
 * find the file.
 */
function bashHasTcp(): boolean {
  if (!existsSync(BASH)) return false;
  const half = join(dirname(TALLY_BIN), 'tally-hook.bash');
  const probe = spawnSync(
    BASH,
    ['--norc', '--noprofile', '-c', '. "$1" || exit 3; exec 3<>/dev/tcp/127.0.0.1/1', 'probe', half],
    { encoding: 'utf8', timeout: 5000 },
  );
  return probe.status !== 3 && (probe.status === 0 || /refused/i.test(probe.stderr ?? ''));
}

/**
 * The command-hook shim (`bin/tally-hook`) as the command hooks' program instead of a Node process:
 * run by bash where bash can open `/dev/tcp` (one bash per hook, no other process), else by
 * `/bin/sh` with curl on `path` (one sh and one curl); it falls back to the Node shim through this
 * node. `TALLY_HOOK_SHIM=sh` skips the bash form, `=node` keeps the Node shim. Undefined: command
 * hooks run the Node shim.
 */
export function hookShim(env: NodeJS.ProcessEnv): string | undefined {
  if (env.TALLY_HOOK_SHIM === 'node') return undefined;
  const script = `${quote(join(dirname(TALLY_BIN), 'tally-hook'))} --node ${quote(process.execPath)}`;
  if (env.TALLY_HOOK_SHIM !== 'sh' && bashHasTcp()) return `${BASH} ${script}`;
  if (!existsSync('/bin/sh') || !onPath('curl', env.PATH)) return undefined;
  return script;
}

/** The registration named by a flag, else the project's `.tally/hooks.json`, else none. */
export function projectRegistration(
  where: Places,
  cwd: string,
  flag: string | undefined,
): { path?: string; registration: Registration | null } {
  const path = flag !== undefined ? resolve(cwd, flag) : projectRegistrationPath(where.state);
  if (flag === undefined && !existsSync(path)) return { registration: null };
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new UsageError(`--registration: cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
  try {
    return { path, registration: parseRegistrationText(bytes).registration };
  } catch (error) {
    if (error instanceof RegistrationError) throw new UsageError(`${path}: ${error.message}`);
    throw error;
  }
}

const SCOPES: InstallScope[] = ['project', 'user', 'managed'];

export function settingsTarget(
  ctx: CommandContext,
  installer: Installer,
  scope: string | undefined,
): { scope: InstallScope; path: string; root: string } {
  const chosen = (scope ?? installer.scopes[0]) as InstallScope;
  if (!SCOPES.includes(chosen)) throw new UsageError(`--scope must be one of ${SCOPES.join(', ')}`);
  if (!installer.scopes.includes(chosen))
    throw new UsageError(
      `--scope ${chosen}: ${installer.label} hooks can be installed for ${installer.scopes.join(' or ')}`,
    );
  const where = placesOf(ctx);
  const root = where.project ? projectRootFor(where.project) : projectRootFor(ctx.cwd);
  return { scope: chosen, path: installer.path(chosen, root, ctx.env.HOME ?? '', ctx.env), root };
}

export function agentOf(positionals: string[]): Installer {
  const agent = positionals[0];
  if (agent === undefined || !Object.hasOwn(INSTALLERS, agent))
    throw new UsageError(`name the agent: ${Object.keys(INSTALLERS).join(', ')}`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  return INSTALLERS[agent]!;
}
