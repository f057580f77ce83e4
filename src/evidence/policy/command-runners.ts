/**
 * Programs that run commands or code given on the line or on their input in a language of their
 * own, which the judge does not read: such a call is opaque. From each program's manual:
 *
 * - an editor run with commands (`vim -es '+w FILE'`, `-c CMD`, `--cmd CMD`, `-S FILE`, vim's `-s
 *   FILE`), or `ed`/`ex` (or vim in ex mode) reading commands from a here-document, a here-string
 *   or a pipe;
 * - make reading its makefile from its input or a name known only at run time (`make -f -`,
 *   `-f /dev/stdin`, `-f <(…)`), or given makefile text (`--eval TEXT`, `-E TEXT`);
 * - gdb with a command that may write or run (`-ex 'shell …'`, `pipe`, `python`, `source`, `dump`,
 *   `set logging`, a `run` with a redirection); the commands that only look (`run`, `bt`, `info`,
 *   `print`, …) and the program after `--args` (judged as a command, shell.ts) are not opaque;
 * - sqlite3 with dot commands, SQL or functions that write files or run programs (`.output`,
 *   `.backup`, `.sh`, `ATTACH`, `VACUUM INTO`, `writefile()`, `edit()`), given on the line or in a
 *   here-document, or with commands piped into it;
 * - capsh running a shell (`--`, `==`), gpg-agent running a program (`--daemon CMD`).
 */
import { unseen } from './script-programs.js';
import type { Redirection, ShellWord } from './shell-grammar.js';

/** What the runners read of a command besides its words: its redirections and whether a pipe feeds it. */
interface Fed {
  redirections: readonly Redirection[];
  pipedInput?: boolean;
}

const EDITORS = new Set(['vi', 'vim', 'nvim', 'view', 'ex', 'ed', 'red']);

/**
 * sqlite3's dot commands that write or run, by any prefix sqlite takes (`.sh` is `.shell`, `.o`
 * `.output` or `.once`), statements that write another file (`ATTACH`, `VACUUM INTO`), and the
 * functions that write or run (`writefile`, `edit`, `load_extension`).
 */
const SQLITE_WRITES =
  /(?:^|\n|;)\s*\.(?:o|ou|out|outp|outpu|output|on|onc|once|b|ba|bac|back|backu|backup|sa|sav|save|sh|she|shel|shell|sy|sys|syst|syste|system|im|imp|impo|impor|import|rea|read|e|ex|exc|exce|excel|op|ope|open|cl|clo|clon|clone|lo|log|loa|load)\b|(?:^|;)\s*(?:attach|vacuum\b[^;]*\binto)\b|\b(?:writefile|edit|load_extension)\s*\(/i;

/** gdb commands that only look: run, backtrace, info, print, frame, list, break, continue, quit. */
const GDB_LOOKS =
  /^(?:r|run|start|bt|backtrace|where|info(?:\s.*)?|i\s.*|p\s.*|print\s.*|frame(?:\s.*)?|f\s.*|list(?:\s.*)?|l\s.*|b\s.*|break\s.*|c|continue|q|quit|thread apply all (?:bt|backtrace)(?:\s.*)?|set (?:pagination|confirm) off)$/;

/** The command's standard input: text on the line (a here-document's body, a here-string), or a pipe. */
function input(command: Fed): { piped: boolean; text: string | undefined } {
  const r = command.redirections.find((d) => (d.fd ?? 0) === 0 && d.op.startsWith('<<'));
  const text = r === undefined ? undefined : r.op === '<<<' ? r.target.value : (r.body ?? '');
  return { piped: command.pipedInput === true, text };
}

/** True when the command's input is text on the line or a pipe, not a file. */
export function fedText(command: Fed): boolean {
  const fed = input(command);
  return fed.piped || fed.text !== undefined;
}

function editorReason(program: string, args: readonly ShellWord[], command: Fed): string | undefined {
  // ed's and ex's -s is "silent"; vim's reads commands from a file.
  const ed = program === 'ed' || program === 'red' || program === 'ex';
  const script = ed ? /^-(?:c|S|-cmd)$/ : /^-(?:c|S|s|-cmd)$/;
  const given = args.find((w) => /^\+./.test(w.value) || script.test(w.value) || /^-c./.test(w.value));
  if (given !== undefined) return `${program} runs editor commands given on the line (${given.value})`;
  const exMode = ed || args.some((w) => /^-[A-Za-z]*[eE]/.test(w.value));
  return exMode && fedText(command) ? `${program} runs editor commands from its input` : undefined;
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
    if (named !== null && (named === undefined || unseen(named)))
      return 'make reads its makefile from its input or a name known at run time';
  }
  return undefined;
}

function gdbReason(args: readonly ShellWord[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as ShellWord;
    if (w.value === '--args') return undefined;
    const attached = /^--?(?:ex|iex|eval-command|init-eval-command)=(.*)$/s.exec(w.value)?.[1];
    const named = /^--?(?:ex|iex|eval-command|init-eval-command)$/.test(w.value) ? args[++i] : undefined;
    const text = attached ?? named?.value;
    if (text === undefined) continue;
    if (w.dynamic || named?.dynamic || !GDB_LOOKS.test(text.trim()))
      return `gdb runs a command that may write or run programs (${text})`;
  }
  return undefined;
}

function sqliteReason(args: readonly ShellWord[], command: Fed): string | undefined {
  // The database is the first operand; SQL and dot commands follow it, or come from the input.
  const sql = args.filter((w) => !w.value.startsWith('-')).slice(1);
  const fed = input(command);
  const text = [...sql.map((w) => w.value), fed.text ?? ''].join('\n');
  return sql.some((w) => w.dynamic) || fed.piped || SQLITE_WRITES.test(text)
    ? 'sqlite3 runs commands that may write files or run programs'
    : undefined;
}

/** Why the command runs what the line does not show, for the programs above; undefined otherwise. */
export function runnerReason(program: string, args: readonly ShellWord[], command: Fed): string | undefined {
  if (EDITORS.has(program)) return editorReason(program, args, command);
  if (program === 'make' || program === 'gmake') return makeReason(args);
  if (program === 'gdb') return gdbReason(args);
  if (program === 'sqlite3') return sqliteReason(args, command);
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
