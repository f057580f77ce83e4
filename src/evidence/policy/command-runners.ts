/**
 * Programs that run commands or code given on the line or on their input in a language of their
 * own, which the judge does not read: such a call is opaque. From each program's manual:
 *
 * - an editor run with commands (`vim -es '+w FILE'`, `-c CMD`, `--cmd CMD`, `-S FILE`, `-s FILE`),
 *   or `ed`/`ex` (or vim in ex mode) reading commands from a here-document, a here-string or a pipe;
 * - make reading its makefile from its input or a name known only at run time (`make -f -`,
 *   `-f /dev/stdin`, `-f <(…)`), or given makefile text (`--eval TEXT`, `-E TEXT`);
 * - gdb with commands (`-ex`, `-iex`, `-x`, `-ix`, `--command`, `--eval-command`, `-batch`) or a
 *   program to run (`--args`);
 * - sqlite3 with dot commands or SQL that write files or run programs (`.output`, `.backup`,
 *   `.shell`, `ATTACH`, `VACUUM INTO`), or with commands from its input;
 * - capsh running a shell (`--`, `==`), gpg-agent running a program (`--daemon CMD`).
 */
import { posix } from 'node:path';
import type { Redirection, ShellWord } from './shell-grammar.js';

/** What the runners read of a command besides its words: its redirections and whether a pipe feeds it. */
interface Fed {
  redirections: readonly Redirection[];
  pipedInput?: boolean;
}

const EDITORS = new Set(['vi', 'vim', 'nvim', 'view', 'ex', 'ed', 'red']);
const SQLITE_WRITES =
  /(?:^|[\s;])\.(?:output|once|backup|save|shell|system|import|read|excel|open|clone|log|dump)\b|\battach\b|\bvacuum\b[\s\S]*\binto\b/i;

/** Words that are the program's input or a descriptor rather than a file (`-`, `/dev/stdin`, `/proc/self/fd/0`). */
const unseen = (w: ShellWord | undefined): boolean =>
  w === undefined || w.dynamic || w.value === '-' || /^\/(?:dev|proc)(?:\/|$)/.test(posix.normalize(w.value));

/** The command's input is text on the line or from a pipe (not a file). */
function fedText(command: Fed): boolean {
  return (
    command.pipedInput === true ||
    command.redirections.some(
      (r) => (r.fd === undefined || r.fd === 0) && (r.op === '<<<' || r.op.startsWith('<<')),
    )
  );
}

function editorReason(program: string, args: readonly ShellWord[], fed: boolean): string | undefined {
  const given = args.find(
    (w) => /^\+./.test(w.value) || /^-(?:c|S|s|-cmd)$/.test(w.value) || /^-c./.test(w.value),
  );
  if (given !== undefined) return `${program} runs editor commands given on the line (${given.value})`;
  const exMode =
    program === 'ex' ||
    program === 'ed' ||
    program === 'red' ||
    args.some((w) => /^-[A-Za-z]*[eE]/.test(w.value));
  return exMode && fed ? `${program} runs editor commands from its input` : undefined;
}

function makeReason(args: readonly ShellWord[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const v = (args[i] as ShellWord).value;
    if (/^(?:-E|--eval)(?:=|$)/.test(v) || /^-E./.test(v)) return 'make is given makefile text (--eval)';
    const file = /^(?:-f|--file=|--makefile=)(.+)$/.exec(v)?.[1];
    const named =
      file !== undefined
        ? { ...(args[i] as ShellWord), value: file }
        : v === '-f' || v === '--file' || v === '--makefile'
          ? args[i + 1]
          : null;
    if (named !== null && unseen(named))
      return 'make reads its makefile from its input or a name known at run time';
  }
  return undefined;
}

/** Why the command runs what the line does not show, for the programs above; undefined otherwise. */
export function runnerReason(program: string, args: readonly ShellWord[], command: Fed): string | undefined {
  if (EDITORS.has(program)) return editorReason(program, args, fedText(command));
  if (program === 'make' || program === 'gmake') return makeReason(args);
  if (program === 'gdb') {
    const given = args.find((w) =>
      /^--?(?:ex|iex|x|ix|command|eval-command|init-command|init-eval-command|batch|args)(?:=|$)/.test(
        w.value,
      ),
    );
    return given === undefined ? undefined : `gdb runs commands or a program (${given.value})`;
  }
  if (program === 'sqlite3') {
    // Dot commands and SQL that write or run: `.output`, `.once`, `.backup`, `.save`, `.shell`,
    // `.system`, `.import`, `.read`, `ATTACH`, `VACUUM INTO`; commands from the input may be any.
    const text = args.map((w) => w.value).join('\n');
    if (args.some((w) => w.dynamic) || fedText(command) || SQLITE_WRITES.test(text))
      return 'sqlite3 runs commands that may write files or run programs';
    return undefined;
  }
  if (program === 'capsh' && args.some((w) => w.value === '--' || w.value === '=='))
    return 'capsh runs a shell with the words after --';
  if (
    program === 'gpg-agent' &&
    args.some((w) => w.value === '--daemon') &&
    args.some((w) => !w.value.startsWith('-'))
  )
    return 'gpg-agent --daemon runs a program';
  return undefined;
}
