/**
 * Commands an agent can type into after they were judged. Codex's `exec_command` keeps a process
 * running and `write_stdin` sends it text later — with no hook of its own, so that text is never
 * judged. What the command line shows is judged as usual; a program that may take commands from
 * what is typed afterwards makes the call opaque (docs/policy.md, "Commands typed into later"):
 *
 * - on a terminal (`tty: true`): every program not known to ignore its terminal — a shell, a REPL,
 *   an editor or a pager (`!sh` in `less`), `git log` paging into one;
 * - without one (`tty` false or omitted, as in Codex's schema: Codex then closes the process's
 *   input), still the programs that read commands from their input, should it be written after all.
 */

import { posix } from 'node:path';
import { isJsonObject } from '../../core/json.js';
import type { SimpleCommand } from './shell.js';
import { readOptions } from './shell-options.js';
import { interpreterName, SHELL_OPTIONS, SHELLS } from './shell-tables.js';

/** Tools whose process stays open to input the agent sends later (Codex's unified exec). */
export const TYPED_INPUT_TOOLS: ReadonlySet<string> = new Set(['exec_command']);

/**
 * Programs that, given a terminal, neither run what is typed there nor hand the terminal to
 * something that does (a pager, an editor, a shell). Everything else is opaque under a terminal.
 */
const IGNORES_TERMINAL: ReadonlySet<string> = new Set(
  (
    ': [ [[ true false echo printf pwd cd pushd popd export unset set shift exit return test read wait ' +
    'sleep ls cat tac head tail wc sort uniq cut tr nl rev fold paste join comm cmp diff grep egrep ' +
    'fgrep rg mkdir rmdir touch rm cp mv ln chmod chown chgrp stat file du df date basename dirname ' +
    'realpath readlink which whoami id uname hostname tee mktemp seq yes md5sum sha1sum sha256sum ' +
    'sha512sum b2sum cksum base64 od xxd hexdump strings truncate find'
  ).split(' '),
);

/** Editors, pagers and consoles: each runs commands typed at it (`:!sh`, `!sh`, `.shell`, `\!`). */
const CONSOLES: ReadonlySet<string> = new Set(
  (
    'vi vim nvim view ex ed nano pico emacs joe micro mcedit less more most pg man info gdb lldb ' +
    'sqlite3 psql mysql mariadb redis-cli mongo mongosh ftp sftp telnet ssh expect screen tmux script ' +
    'irb ghci julia R'
  ).split(' '),
);

/**
 * Wrappers that start a shell when given no command (`sudo -s`, `su`, `doas -s`, `chroot DIR`,
 * `script`); `su` and `runuser` take user names as operands, a command only with `-c`.
 */
const SHELL_STARTERS: ReadonlySet<string> = new Set(['sudo', 'su', 'doas', 'chroot', 'script', 'runuser']);

/** The program a command runs, or the wrapper that runs a shell of its own. */
function programOf(command: SimpleCommand): string | undefined {
  if (command.invocation !== undefined) return command.invocation.program;
  const head = command.argv[0];
  return head === undefined ? undefined : posix.basename(head);
}

/** True when a command reads the commands it runs from its input: a REPL, an editor, `git rebase -i`. */
function readsCommands(command: SimpleCommand): boolean {
  const invocation = command.invocation;
  if (invocation === undefined) return SHELL_STARTERS.has(programOf(command) ?? '');
  const { program, args } = invocation;
  if (CONSOLES.has(program) || invocation.wrappers.some((w) => w === 'su' || w === 'runuser')) return true;
  if (SHELLS.has(program)) {
    const read = readOptions(args, SHELL_OPTIONS);
    return read.operands.length === 0 || read.options.has('-s') || read.options.has('-i');
  }
  if (interpreterName(program) !== undefined) {
    // No script file or module: a REPL, or a program read from the input (`python -`).
    const operands = args.filter((w) => !w.value.startsWith('-') || w.value === '-');
    return operands.length === 0 || operands[0]?.value === '-' || args.some((w) => w.value === '-i');
  }
  if (program === 'git') {
    const flags = args.map((w) => w.value);
    if (invocation.subcommand === 'rebase')
      return flags.some((f) => f === '--interactive' || /^-[^-]*i/.test(f));
    if (invocation.subcommand === 'add')
      return flags.some((f) => /^--(?:interactive|patch|edit)$/.test(f) || /^-[^-]*[ipe]/.test(f));
  }
  return false;
}

/**
 * Why a call's command may run what the agent types into it later, when it may: the reason the
 * call is judged as opaque. Undefined for tools whose processes take no later input.
 */
export function typedInputReason(
  tool: string,
  input: unknown,
  commands: readonly SimpleCommand[],
): string | undefined {
  if (!TYPED_INPUT_TOOLS.has(tool)) return undefined;
  const terminal = isJsonObject(input) && input.tty === true;
  for (const command of commands) {
    // An inline script's own commands are listed too; an opaque command is opaque already.
    const program = programOf(command);
    if (command.wrapper || command.opaque !== undefined || program === undefined) continue;
    if (readsCommands(command))
      return `${program} reads commands from its input, which ${tool} lets the agent type into later, unjudged`;
    if (terminal && !IGNORES_TERMINAL.has(program))
      return `${program} runs on a terminal ${tool} lets the agent type into later, unjudged`;
  }
  return undefined;
}
