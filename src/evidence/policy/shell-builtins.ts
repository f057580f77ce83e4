/**
 * Bash builtins that run text as code, later or at once, without a wrapper's look: `trap`'s
 * action, `mapfile -C`, `compgen -C/-F/-W`, `complete`, the names and arithmetic that `let`,
 * `declare`, `printf -v`, `read`, `unset`, `test -v` and `((…))` evaluate (an array subscript there
 * expands `$(…)` again), prompt strings (`PS4`, `${x@P}`), what changes which program a later name
 * runs (`hash -p`, `enable -f/-n`, `alias`), what runs a line of the shell's history again (`fc`,
 * history expansion turned on by `set -H`), `history -w` writing a file, and `bind -x`. Each is
 * read from the bash manual; a real-bash test shows each one runs its text. docs/policy.md, "Builtins that run text", lists them.
 */

import type { ShellCommand, ShellWord } from './shell-grammar.js';

/** What a builtin runs: an opaque reason, and the scripts written out in it (listed too). */
export interface BuiltinCode {
  opaque?: string;
  /** Code run later (a trap, a prompt command, an alias's text): its directory is unknown. */
  scripts: string[];
}

/** Text that a second expansion runs as a command: `$(…)` or a backquote. */
const COMMAND_TEXT = /\$\(|`/;
/** `${name@P}`: the value is expanded as a prompt string, running any `$(…)` it holds. */
const promptTransform = (text: string): boolean => text.includes('@P}') && text.includes('${');
/** Variables bash expands as prompts later (PS4 for `set -x`; PS0, PS1, PS2 interactively). */
const PROMPTS = new Set(['PS0', 'PS1', 'PS2', 'PS4']);
const DECLARATIONS = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
const NAME = /^([A-Za-z_][A-Za-z0-9_]*)(\[.*?\])?(\+?=|$)/s;

/**
 * True when evaluating a word as a variable name or arithmetic expression may run a command: its
 * text holds `$(…)` or a backquote (a quoted one is text bash evaluates), or an array subscript holds
 * an expansion. A substitution outside a subscript of a word computed at run time is only a value.
 */
function evaluatesCommand(word: ShellWord): boolean {
  return (!word.dynamic && COMMAND_TEXT.test(word.value)) || subscriptExpands(word.value, false);
}

/**
 * True when an array subscript (`[…]`) holds `$(…)` or a backquote, or (unless `commandsOnly`) a
 * parameter expansion: arithmetic evaluation expands the subscript, running any command it gives.
 * One pass, so a hostile word cannot make it slow.
 */
function subscriptExpands(text: string, commandsOnly: boolean): boolean {
  let inside = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '[') inside = true;
    else if (c === ']') inside = false;
    else if (inside && c === '`') return true;
    else if (inside && c === '$') {
      const next = text[i + 1] ?? '';
      if (next === '(' || (!commandsOnly && /[{A-Za-z_]/.test(next))) return true;
    }
  }
  return false;
}

/**
 * Why an assignment (`NAME=VALUE`, as a command's prefix, alone, or given to `declare` and its
 * kin) may run code later, if it may: a subscript holding `$(…)`, a prompt string holding code, or
 * a value holding a subscript with `$(…)` that arithmetic on the variable would run.
 */
function assignmentCode(word: ShellWord): string | undefined {
  const m = NAME.exec(word.value);
  if (m === null) return undefined;
  const [whole, name = '', subscript = '', equals] = m;
  if (subscript !== '' && COMMAND_TEXT.test(subscript))
    return `the subscript of ${name} runs a command when it is evaluated`;
  if (equals === undefined || equals === '') return undefined;
  const value = word.value.slice(whole.length);
  if (PROMPTS.has(name) && (word.dynamic || COMMAND_TEXT.test(value) || promptTransform(value)))
    return `${name} is expanded as a prompt later, running the code it holds`;
  if (name === 'PROMPT_COMMAND' && word.dynamic) return 'PROMPT_COMMAND runs a command computed at run time';
  if (subscriptExpands(value, true))
    return `${name} holds a subscript that runs a command when ${name} is evaluated as a number`;
  return undefined;
}

/** Why any word of a command expands a prompt string (`${x@P}`), if one does. */
function promptExpansion(command: ShellCommand): string | undefined {
  const words = [...command.assignments, ...command.words, ...command.redirections.map((r) => r.target)];
  // A here-document's body expands unless its delimiter is quoted.
  const bodies = command.redirections.filter((r) => !/['"\\]/.test(r.target.raw)).map((r) => r.body ?? '');
  if (words.some((w) => promptTransform(w.raw)) || bodies.some(promptTransform))
    return 'a prompt expansion (@P) of a value runs any command it holds';
  return undefined;
}

/** Why an arithmetic command (`((…))`, `$((…))`) may run a command its text does not show. */
function arithmeticCode(command: ShellCommand): string | undefined {
  return command.words.some(evaluatesCommand)
    ? 'arithmetic evaluation runs the command in a subscript'
    : undefined;
}

/**
 * Splits leading options (`-a`, `-ab`, `-aVALUE`, `-a VALUE`; `+a` too with `plus`, as `declare`
 * takes them) from operands; `valued` letters take a value.
 */
function options(
  args: readonly ShellWord[],
  valued: string,
  plus = false,
): { flags: Map<string, ShellWord[]>; operands: ShellWord[] } {
  const flags = new Map<string, ShellWord[]>();
  let i = 0;
  for (; i < args.length; i++) {
    const v = (args[i] as ShellWord).value;
    if (v === '--') {
      i++;
      break;
    }
    if (!(plus ? /^[-+]./ : /^-./).test(v)) break;
    for (let j = 1; j < v.length; j++) {
      const letter = v[j] as string;
      const list = flags.get(letter) ?? [];
      flags.set(letter, list);
      if (!valued.includes(letter)) continue;
      const rest = v.slice(j + 1);
      const value = rest !== '' ? { ...(args[i] as ShellWord), value: rest } : args[++i];
      if (value !== undefined) list.push(value);
      break;
    }
  }
  return { flags, operands: args.slice(i) };
}

const named = (program: string, words: readonly ShellWord[]): BuiltinCode | undefined =>
  words.some(evaluatesCommand)
    ? { opaque: `${program} evaluates a name or number whose subscript runs a command`, scripts: [] }
    : undefined;

/** A script given as text: listed when written out, opaque when computed at run time. */
function script(program: string, text: ShellWord, what: string): BuiltinCode {
  return text.dynamic
    ? { opaque: `${program} ${what} computed at run time`, scripts: [] }
    : { scripts: [text.value] };
}

/** The test operands that are variable names (`-v NAME`, `-R NAME`) or, in `[[`, numbers. */
function testOperands(program: string, args: readonly ShellWord[]): ShellWord[] {
  const arithmetic = /^-(?:eq|ne|lt|le|gt|ge)$/;
  const out: ShellWord[] = [];
  args.forEach((w, i) => {
    const before = args[i - 1]?.value ?? '';
    const after = args[i + 1]?.value ?? '';
    if (before === '-v' || before === '-R') out.push(w);
    else if (program === '[[' && (arithmetic.test(before) || arithmetic.test(after))) out.push(w);
  });
  return out;
}

/** `set -H`, `set -o histexpand` (in any cluster of options), `shopt -s -o histexpand`. */
function histexpand(program: string, args: readonly ShellWord[]): boolean {
  if (args.some((w) => w.dynamic)) return true;
  const values = args.map((w) => w.value);
  if (program === 'shopt') {
    const letters = values.filter((v) => v.startsWith('-')).join('');
    return letters.includes('s') && letters.includes('o') && values.includes('histexpand');
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string;
    if (v === '--') return false;
    if (!/^-[A-Za-z]/.test(v)) continue;
    if (v.slice(1).includes('H')) return true;
    if (v.endsWith('o') && values[i + 1] === 'histexpand') return true;
  }
  return false;
}

/** What a builtin that runs or evaluates text runs; undefined for every other program. */
export function builtinCode(program: string, args: readonly ShellWord[]): BuiltinCode | undefined {
  switch (program) {
    case 'trap': {
      // trap [-lpP] [[ACTION] SIGNAL…]: `-` or a lone signal resets, '' ignores, anything else runs.
      const { flags, operands } = options(args, '');
      const action = operands[0];
      if (flags.size > 0 || action === undefined || operands.length === 1) return undefined;
      if (action.value === '-' || (action.value === '' && !action.dynamic)) return undefined;
      return script(program, action, 'runs an action');
    }
    case 'hash': {
      const { flags } = options(args, 'pt');
      return flags.has('p')
        ? { opaque: 'hash -p makes a later command name run another program', scripts: [] }
        : undefined;
    }
    case 'enable': {
      const { flags } = options(args, 'f');
      if (flags.has('f')) return { opaque: 'enable -f loads a builtin from a shared object', scripts: [] };
      if (flags.has('n'))
        return { opaque: 'enable -n makes a later builtin name run the program of that name', scripts: [] };
      return undefined;
    }
    case 'alias': {
      // In a shell that expands aliases (interactive, or `shopt -s expand_aliases`), a later line's
      // first word may become any text: what it runs cannot be read from the line.
      const { operands } = options(args, '');
      const defined = operands.filter((w) => w.value.includes('=') || w.dynamic);
      if (defined.length === 0) return undefined;
      return {
        opaque: 'alias makes a later command name run other text',
        scripts: defined.filter((w) => !w.dynamic).map((w) => w.value.slice(w.value.indexOf('=') + 1)),
      };
    }
    case 'mapfile':
    case 'readarray': {
      const { flags, operands } = options(args, 'CcdnOsu');
      const callback = flags.get('C')?.[0];
      if (callback !== undefined)
        return {
          opaque: `${program} -C runs its callback with words read from its input`,
          scripts: callback.dynamic ? [] : [callback.value],
        };
      return named(program, operands);
    }
    case 'compgen':
    case 'complete': {
      const { flags } = options(args, 'ACFGPSWXo');
      const command = flags.get('C')?.[0];
      if (command !== undefined)
        return {
          opaque: `${program} -C runs a command with words it completes`,
          scripts: command.dynamic ? [] : [command.value],
        };
      if (flags.has('F')) return { opaque: `${program} -F runs a shell function`, scripts: [] };
      const words = flags.get('W')?.[0];
      if (words !== undefined && (words.dynamic || COMMAND_TEXT.test(words.value)))
        return { opaque: `${program} -W expands its word list again`, scripts: [] };
      return undefined;
    }
    case 'fc': {
      // fc -l lists; every other form runs history entries again, edited by a pattern (-s, -e -)
      // or by an editor ($FCEDIT): what runs is not on the line.
      const { flags } = options(args, 'e');
      return flags.has('l')
        ? undefined
        : { opaque: 'fc runs a command again from the shell history, changed', scripts: [] };
    }
    case 'history': {
      // Without a file name it writes the history file every interactive shell keeps.
      const { flags, operands } = options(args, 'd');
      return (flags.has('w') || flags.has('a')) && operands.length > 0
        ? { opaque: 'history -w/-a writes the shell history to the file it names', scripts: [] }
        : undefined;
    }
    case 'set':
    case 'shopt':
      // History expansion in a script: a later line's `!…` runs an earlier line, changed.
      if (histexpand(program, args))
        return {
          opaque: `${program} turns on history expansion: a later line may run an earlier one, changed`,
          scripts: [],
        };
      // `shopt -s cdable_vars`: `cd NAME` then goes where the variable NAME says.
      return program === 'shopt' && args.some((w) => w.value === 'cdable_vars')
        ? { opaque: 'shopt -s cdable_vars makes `cd NAME` go where a variable says', scripts: [] }
        : undefined;
    case 'bind': {
      const { flags } = options(args, 'mqurfx');
      return flags.has('x') ? { opaque: 'bind -x makes a key run a command', scripts: [] } : undefined;
    }
    case 'let':
      return named(program, args);
    case 'unset':
      return named(program, options(args, '').operands);
    case 'test':
    case '[':
    case '[[':
      return named(program, testOperands(program, args));
    case 'printf':
      return named(program, options(args.slice(0, 2), 'v').flags.get('v') ?? []);
    case 'read': {
      const { flags, operands } = options(args, 'adinNptu');
      return named(program, [...operands, ...(flags.get('a') ?? [])]);
    }
    case 'getopts':
      return named(program, args.slice(1, 2));
  }
  if (!DECLARATIONS.has(program)) return undefined;
  const { operands } = options(args, '', true);
  for (const w of operands) {
    const reason = assignmentCode(w);
    if (reason !== undefined) return { opaque: `${program}: ${reason}`, scripts: [] };
  }
  const names = operands.map((w) => ({ ...w, value: w.value.split('=')[0] ?? '' }));
  const scripts = promptCommands(operands);
  return named(program, names) ?? (scripts.length > 0 ? { scripts } : undefined);
}

/** What `PROMPT_COMMAND=…` words written out set: run before each prompt of an interactive shell. */
export function promptCommands(words: readonly ShellWord[]): string[] {
  return words
    .filter((w) => !w.dynamic && /^PROMPT_COMMAND\+?=./s.test(w.value))
    .map((w) => w.value.slice(w.value.indexOf('=') + 1));
}

/** Why a command's assignments or expansions run code later or again, if they do. */
export function laterCode(command: ShellCommand): string | undefined {
  if (command.arithmetic) {
    const reason = arithmeticCode(command);
    if (reason !== undefined) return reason;
  }
  // A prompt given through a wrapper's `NAME=value` words (`env PS4='$(…)' bash -x`) counts too.
  const prompts = command.words.filter((w) => /^(?:PS[0124]|PROMPT_COMMAND)=/.test(w.value));
  for (const assignment of [...command.assignments, ...prompts]) {
    const reason = assignmentCode(assignment);
    if (reason !== undefined) return reason;
  }
  return promptExpansion(command);
}
