/**
 * Resolves each simple command of a command line to the program it runs: through leading
 * assignments, wrappers (`sudo`, `env`, `timeout`, `xargs` …), `busybox`, `find -exec`, and into the
 * scripts of `sh -c`, `eval`, `su -c`, `watch` and here-documents fed to a shell, recursively.
 * What cannot be resolved without running it (a computed command name, `eval "$x"`, `… | sh`,
 * `python -c`, the builtins of shell-builtins.ts that run text) is reported as opaque. The tables
 * are in shell-tables.ts; docs/policy.md has both.
 */

import { posix } from 'node:path';
import { memoString } from '../../core/memo.js';
import { runnerReason } from './command-runners.js';
import { commandValues } from './command-values.js';
import { gitRunsProgram, gitSubcommandRuns } from './git-config.js';
import { isScriptProgram, scriptProgramEffects } from './script-programs.js';
import { type BuiltinCode, builtinCode, laterCode, promptCommands } from './shell-builtins.js';
import {
  MAX_SHELL_NESTING,
  parseShell,
  type Redirection,
  type ShellCommand,
  type ShellWord,
} from './shell-grammar.js';
import { GLOBAL_OPTIONS, readOptions } from './shell-options.js';
import { PATCH_PROGRAMS, patchFolderAsWritten, patchText } from './shell-patch.js';
import {
  INTERPRETERS,
  inlineCodeFlag,
  interpreterName,
  SHELL_OPTIONS,
  SHELLS,
  SUBCOMMAND_TOOLS,
  WRAPPERS,
} from './shell-tables.js';

export { MAX_SHELL_NESTING } from './shell-grammar.js';

/**
 * Variables that give a program options or a command to run (each program's manual): a shell runs
 * the file `BASH_ENV` or `ENV` names before its script (bash(1) INVOCATION), less runs `LESSOPEN`'s
 * command, perl and ruby take switches from `PERL5OPT` and `RUBYOPT`.
 */
const OPTION_VARIABLES: ReadonlyMap<string, readonly string[]> = new Map([
  ['tar', ['TAR_OPTIONS', 'TAPE']],
  ['zip', ['ZIPOPT']],
  ['unzip', ['UNZIP', 'UNZIPOPT']],
  ['rsync', ['RSYNC_RSH', 'RSYNC_CONNECT_PROG']],
  ['gzip', ['GZIP']],
  ['xz', ['XZ_OPT', 'XZ_DEFAULTS']],
  ['grep', ['GREP_OPTIONS']],
  ['less', ['LESSOPEN', 'LESSCLOSE']],
  ['perl', ['PERL5OPT']],
  ['ruby', ['RUBYOPT']],
  ...[...SHELLS].map((shell): [string, string[]] => [shell, ['BASH_ENV', 'ENV']]),
]);

/** node's options from its environment: code as text only through a `data:` URL (or a value known at run time). */
const NODE_PROGRAMS = new Set(['node', 'nodejs', 'deno', 'bun']);
const givesCode = (value: string): boolean => value.includes('$') || /\bdata:/.test(value);

/**
 * When a variable of OPTION_VARIABLES counts (all the others always do): `BASH_ENV` when it names
 * the input, a descriptor or a file known only at run time; `ENV` only for an interactive shell
 * (bash and dash read it with `-i` alone); `PERL5OPT` and `RUBYOPT` when known
 * only at run time (a value on the line is switches that load modules by name, as a script would).
 */
const VARIABLE_TESTS: Record<string, (value: string, args: readonly ShellWord[]) => boolean> = {
  // A startup file named on the line is a script in a file (`BASH_ENV=~/.bashrc`); one read from
  // the input, a descriptor or a name known only at run time is not shown.
  BASH_ENV: (value) => value.includes('$') || value === '-' || /^\/(?:dev|proc)(?:\/|$)/.test(value),
  ENV: (_value, args) => args.some((w) => /^-[A-Za-z]*i/.test(w.value)),
  PERL5OPT: (value) => value.includes('$'),
  RUBYOPT: (value) => value.includes('$'),
};

/**
 * The variable an assignment word sets, with its value: `$` (anything) when computed at run time
 * or appended to (`A+=…` may hold more than the line shows).
 */
function assignmentOf(text: string, dynamic: boolean): { name: string; value: string } | undefined {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)$/s.exec(text);
  if (m === null) return undefined;
  return { name: m[1] as string, value: dynamic || m[2] === '+' ? '$' : (m[3] as string) };
}

/** The variables a command gives the program `words` starts: its own assignments and a wrapper's (`env A=1 …`). */
function variablesFor(command: ShellCommand, words: readonly ShellWord[]): { name: string; value: string }[] {
  const at = words[0] === undefined ? -1 : command.words.indexOf(words[0]);
  const given = [...command.assignments, ...command.words.slice(0, Math.max(0, at))];
  return given.flatMap((w) => assignmentOf(w.value, w.dynamic) ?? []);
}

/**
 * Where a script operand is read from: the command's input (`-`, `/dev/stdin`, `/dev/fd/0`,
 * `/proc/self/fd/0`), another descriptor or device (`/dev/fd/3`, `/proc/self/fd/3`), or a file.
 */
function scriptSource(word: ShellWord | undefined): 'stdin' | 'device' | undefined {
  if (word === undefined || word.dynamic) return undefined;
  if (word.value === '-') return 'stdin';
  const path = posix.normalize(word.value);
  if (/^\/(?:dev\/(?:stdin|fd\/0)|proc\/(?:self|thread-self|\d+)\/fd\/0)$/.test(path)) return 'stdin';
  return /^\/(?:dev|proc)(?:\/|$)/.test(path) ? 'device' : undefined;
}

/** The program a simple command runs, once wrappers are removed. */
export interface Invocation {
  /** The program by its basename (`/bin/rm` → `rm`). */
  program: string;
  /** For tools with subcommands (`git`, `docker` …): the subcommand, after the tool's own options. */
  subcommand?: string;
  /** The words after the program (after the subcommand for tools that have one). */
  args: ShellWord[];
  /** The program word and every word after it, as the program receives them. */
  argv: ShellWord[];
  /** The wrappers removed, outermost first. */
  wrappers: string[];
}

export interface SimpleCommand {
  /** The source text of this command, trimmed. */
  raw: string;
  /** Leading assignments and words as bash passes them (quotes removed), reserved words dropped. */
  words: string[];
  /** `words` joined with single spaces. */
  text: string;
  /** The words bash passes to the program it starts (no assignments, no redirections). */
  argv: string[];
  /** The invocation without assignments and wrappers, program by basename. */
  stripped: string;
  /** True when this command only runs an inline script whose commands are listed too. */
  wrapper: boolean;
  /** 0 for the top level, +1 per substitution, subshell or inline script. */
  depth: number;
  /** What it runs, when that is known. */
  invocation?: Invocation;
  redirections: Redirection[];
  /** The directory it runs in, relative to the line's start; undefined when unknowable. */
  cwd: string | undefined;
  /**
   * The directory it runs in with each `cd` operand read as written, when that is another
   * (ShellCommand.asWritten): where Codex applies an `apply_patch` it runs itself.
   */
  asWritten?: { cwd: string | undefined };
  /** Why what this command runs cannot be known statically, when it cannot. */
  opaque?: string;
  /** True when a pipe feeds its standard input. */
  pipedInput?: boolean;
}

export interface ShellAnalysis {
  commands: SimpleCommand[];
  /** False when nesting went deeper than the cap or a quote/paren was left open: the list may be short. */
  complete: boolean;
}

const STDIN_WORD: ShellWord = { raw: '<stdin>', value: '', dynamic: true, glob: false, tilde: false };

/**
 * The command xargs runs, with what it reads from its input: added after its words, or, with
 * `-I R` (`-i`, `--replace`: `{}`), put in place of R in each word that holds it.
 */
function withInput(words: ShellWord[], options: Map<string, string[]>): ShellWord[] {
  const replace =
    options.get('-I')?.[0] ?? (options.has('replace') ? options.get('replace')?.[0] || '{}' : undefined);
  if (replace === undefined || replace === '') return [...words, STDIN_WORD];
  return words.map((w) =>
    w.value.includes(replace)
      ? { ...w, value: w.value.replaceAll(replace, '$XARGS_INPUT'), dynamic: true }
      : w,
  );
}

function word(value: string): ShellWord {
  return { raw: value, value, dynamic: false, glob: false, tilde: false };
}

/** Distinct variables the line may set before a command, past which they are not followed one by one. */
const MAX_LINE_VARIABLES = 256;

class Resolver {
  readonly analysis: ShellAnalysis = { commands: [], complete: true };
  /** What the commands listed so far assign (`export A=1; …`), by name: the last value. */
  private readonly assigned = new Map<string, string>();
  /** More than MAX_LINE_VARIABLES names were assigned: any variable may be set. */
  private tooManyVariables = false;
  /** Commands of code run later (see later()). */
  private readonly runLater = new Set<SimpleCommand>();

  add(parsed: { commands: ShellCommand[]; complete: boolean }): void {
    if (!parsed.complete) this.analysis.complete = false;
    for (const command of parsed.commands) this.resolve(command);
  }

  /**
   * Code run later (a trap's action, a prompt command, an alias's text): read where the command
   * stands, and moved to a folder not known when the line changes folder anywhere (finish()).
   */
  private later(script: string, from: ShellCommand): void {
    const first = this.analysis.commands.length;
    this.nested(script, from);
    for (const command of this.analysis.commands.slice(first)) this.runLater.add(command);
  }

  /** Done reading: code run later runs in a folder not known if the line changes folder anywhere. */
  finish(): ShellAnalysis {
    if (this.runLater.size === 0) return this.analysis;
    const moves = this.analysis.commands.some(
      (c) => c.opaque !== undefined || ['cd', 'pushd', 'popd'].includes(c.invocation?.program ?? ''),
    );
    if (moves) for (const command of this.runLater) command.cwd = undefined;
    return this.analysis;
  }

  /** Parses a script run by a command, one level deeper, in that command's directory. */
  private nested(script: string, from: ShellCommand): void {
    if (from.depth + 1 > MAX_SHELL_NESTING) {
      this.analysis.complete = false;
      return;
    }
    this.add(parseShell(script, from.depth + 1, { cwd: from.cwd }));
  }

  private push(command: ShellCommand, fields: Partial<SimpleCommand>): SimpleCommand {
    const all = [...command.assignments, ...command.words].map((w) => w.value);
    const simple: SimpleCommand = {
      raw: command.raw,
      words: all,
      text: all.join(' '),
      argv: command.words.map((w) => w.value),
      stripped: '',
      wrapper: false,
      depth: command.depth,
      redirections: command.redirections,
      cwd: command.cwd,
      ...(command.pipedInput ? { pipedInput: true } : {}),
      ...fields,
    };
    // A wrapper that changes folder (`env -C`) is run by bash: the folder as written is only a `cd`'s.
    if (command.asWritten !== undefined && simple.cwd === command.cwd) simple.asWritten = command.asWritten;
    simple.opaque ??= laterCode(command);
    // A prompt command runs later (later(): where the line stands, unless it changes folder).
    for (const script of promptCommands(command.assignments)) this.later(script, command);
    const invocation = simple.invocation;
    if (invocation !== undefined) {
      const sub = invocation.subcommand === undefined ? [] : [invocation.subcommand];
      simple.stripped = [invocation.program, ...sub, ...invocation.args.map((w) => w.value)].join(' ');
    } else simple.stripped = command.words.map((w) => w.value).join(' ');
    this.analysis.commands.push(simple);
    for (const word of simple.words) {
      const set = assignmentOf(word, false);
      if (set === undefined) continue;
      if (this.assigned.size >= MAX_LINE_VARIABLES && !this.assigned.has(set.name))
        this.tooManyVariables = true;
      else this.assigned.set(set.name, set.value);
    }
    return simple;
  }

  resolve(given: ShellCommand): void {
    let command = given;
    let words = command.words;
    let cwd = command.cwd;
    const wrappers: string[] = [];
    for (;;) {
      if (wrappers.length > MAX_SHELL_NESTING) {
        this.analysis.complete = false;
        this.push(command, { cwd, opaque: 'wrappers nested too deeply to read' });
        return;
      }
      const head = words[0];
      if (head === undefined) {
        this.push(command, { cwd });
        return;
      }
      if (head.dynamic) {
        this.push(command, { cwd, opaque: 'the command name is computed at run time' });
        return;
      }
      // `npm exec` (`npm x`) is npx.
      const named = posix.basename(head.value);
      const exec = named === 'npm' && (words[1]?.value === 'exec' || words[1]?.value === 'x');
      const program = exec ? 'npx' : named;
      if (exec) words = [{ ...head, value: 'npx' }, ...words.slice(2)];
      const wrapper = WRAPPERS.get(program);
      if (wrapper === undefined) break;
      wrappers.push(program);
      const read = readOptions(words.slice(1), wrapper.options);
      if (wrapper.noRun?.some((o) => read.options.has(o))) {
        this.push(command, { cwd, invocation: { program, args: words.slice(1), argv: words, wrappers } });
        return;
      }
      const chdir =
        wrapper.chdirOption === undefined ? undefined : read.options.get(wrapper.chdirOption)?.[0];
      if (chdir !== undefined)
        cwd =
          cwd === undefined || chdir.includes('$')
            ? undefined
            : posix.normalize(posix.isAbsolute(chdir) ? chdir : posix.join(cwd, chdir));
      let rest = read.operands;
      // Files the wrapper writes itself are judged as redirections of the command; `script`
      // writes its FILE operand (`typescript` here without one) around what it runs.
      const written = (wrapper.writes ?? []).flatMap((o) => read.words.get(o) ?? []);
      if (program === 'script') {
        const file = rest[0] !== undefined && !/^-/.test(rest[0].value) ? rest[0] : undefined;
        written.push(file ?? word('typescript'));
        if (file !== undefined) rest = rest.slice(1);
        const late = readOptions(rest, wrapper.options);
        if (late.options.has('command')) read.options.set('command', late.options.get('command') ?? []);
      }
      if (written.length > 0)
        command = {
          ...command,
          redirections: [...command.redirections, ...written.map((target) => ({ op: '>' as const, target }))],
        };
      if (wrapper.assignments)
        while (rest[0] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0].value)) rest = rest.slice(1);
      // `su - USER`: the dash is `--login`, not the user.
      if (wrapper.optionsAfterLeading && rest[0]?.value === '-') rest = rest.slice(1);
      rest = rest.slice(wrapper.leadingOperands ?? 0);
      if (wrapper.optionsAfterLeading) {
        const late = readOptions(rest, wrapper.options);
        for (const [name, values] of late.options)
          read.options.set(name, [...(read.options.get(name) ?? []), ...values]);
        rest = late.operands;
      }
      let script =
        wrapper.scriptOption === undefined ? undefined : read.options.get(wrapper.scriptOption)?.[0];
      // `flock FILE -c COMMAND`: the script option may also follow the wrapper's operand.
      if (wrapper.scriptOption !== undefined && (rest[0]?.value === '-c' || rest[0]?.value === '--command')) {
        script = rest[1]?.value;
        rest = [];
      }
      const split =
        wrapper.splitOption === undefined ? undefined : read.options.get(wrapper.splitOption)?.[0];
      if (script !== undefined || split !== undefined || (wrapper.joinsOperands && rest.length > 0)) {
        const dynamic = words.some((w) => w.dynamic);
        // `env -S` splits its string and keeps the other words whole; `watch` joins its words for `sh -c`.
        const text =
          script ??
          (split !== undefined
            ? [split, ...rest.map((w) => shellQuote(w.value))].join(' ')
            : rest.map((w) => w.value).join(' '));
        if (dynamic)
          this.push(command, { cwd, opaque: `${program} runs a command line computed at run time` });
        else {
          this.push(command, {
            cwd,
            wrapper: true,
            invocation: { program, args: words.slice(1), argv: words, wrappers },
          });
          this.nested(text, { ...command, cwd });
        }
        return;
      }
      if (wrapper.stdinArguments) rest = withInput(rest, read.options);
      words = rest;
    }
    this.program(command, words, cwd, wrappers);
  }

  /**
   * The variables the program `words` starts may see from the line: its own assignments, a
   * wrapper's (`env A=1 …`), and every assignment the line made before it (`export A=1; …`). A line
   * that sets more names than are followed may have set any: `null`.
   */
  private variables(
    command: ShellCommand,
    words: readonly ShellWord[],
  ): { name: string; value: string }[] | null {
    if (this.tooManyVariables) return null;
    const earlier = [...this.assigned].map(([name, value]) => ({ name, value }));
    return [...earlier, ...variablesFor(command, words)];
  }

  private program(
    command: ShellCommand,
    words: ShellWord[],
    cwd: string | undefined,
    wrappers: string[],
  ): void {
    const program = posix.basename((words[0] as ShellWord).value);
    let args = words.slice(1);
    const invocation: Invocation = { program, args, argv: words, wrappers };
    const here = { ...command, cwd };
    const code = builtinCode(program, args);
    if (code !== undefined) {
      this.builtin(command, cwd, invocation, code);
      return;
    }
    const names = OPTION_VARIABLES.get(program);
    const variables = this.variables(command, words);
    // NODE_OPTIONS reaches every node any program starts (`npm test`, `npx jest`).
    const optionsFrom =
      variables === null
        ? 'a variable the line sets (it sets too many to follow)'
        : (names?.find((name) =>
            variables.some((v) => v.name === name && (VARIABLE_TESTS[name]?.(v.value, args) ?? true)),
          ) ??
          (variables.some((v) => v.name === 'NODE_OPTIONS' && givesCode(v.value))
            ? 'NODE_OPTIONS'
            : undefined));
    if (optionsFrom !== undefined) {
      this.push(command, {
        cwd,
        invocation,
        opaque: `${optionsFrom}, set on the line, gives ${program} options the line does not show`,
      });
      return;
    }
    const runs = runnerReason(program, args, command);
    if (runs !== undefined) {
      this.push(command, { cwd, invocation, opaque: runs });
      return;
    }
    // `gdb … --args PROG ARGS…` runs PROG: judged as a command of its own.
    const debugged = program === 'gdb' ? args.findIndex((w) => w.value === '--args') : -1;
    if (debugged >= 0 && args[debugged + 1] !== undefined) {
      const rest = args.slice(debugged + 1);
      if (rest.some((w) => w.dynamic))
        this.push(command, { cwd, invocation, opaque: 'gdb runs a program computed at run time' });
      else {
        this.push(command, { cwd, invocation, wrapper: true });
        this.nested(rest.map((w) => shellQuote(w.value)).join(' '), here);
      }
      return;
    }
    const commands = commandValues(program, args);
    if (commands.length > 0) {
      if (commands.some((w) => w.dynamic)) {
        this.push(command, {
          cwd,
          invocation,
          opaque: `${program} runs a command line computed at run time`,
        });
        return;
      }
      this.push(command, { cwd, invocation });
      for (const line of commands) this.nested(line.value, here);
      return;
    }
    if (
      PATCH_PROGRAMS.has(program) &&
      patchText(args, command.redirections, command.pipedInput) === undefined
    ) {
      this.push(command, { cwd, invocation, opaque: `${program} applies a patch that is not written out` });
      return;
    }
    if (PATCH_PROGRAMS.has(program) && cwd === command.cwd && patchFolderAsWritten(command) === null) {
      this.push(command, {
        cwd,
        invocation,
        opaque: `${program} may be applied in the folder of a cd as written, not known here`,
      });
      return;
    }
    if (SHELLS.has(program)) {
      const read = readOptions(args, SHELL_OPTIONS);
      const cFlag = [...read.options.keys()].some((o) => /^-[A-Za-z]$/.test(o) && o === '-c');
      if (cFlag) {
        const script = read.operands[0];
        if (script === undefined) {
          this.push(command, { cwd, invocation });
          return;
        }
        if (script.dynamic) {
          this.push(command, {
            cwd,
            invocation,
            opaque: `${program} -c runs a script computed at run time`,
          });
          return;
        }
        this.push(command, { cwd, invocation, wrapper: true });
        this.nested(script.value, here);
        return;
      }
      if (read.operands[0]?.dynamic) {
        this.push(command, {
          cwd,
          invocation,
          opaque: `${program} runs a script computed at run time`,
        });
        return;
      }
      const source = scriptSource(read.operands[0]);
      if (source === 'device') {
        this.push(command, { cwd, invocation, opaque: `${program} runs a script from a descriptor` });
        return;
      }
      if (read.operands.length === 0 || read.options.has('-s') || source === 'stdin') {
        this.stdinScript(command, cwd, invocation);
        return;
      }
    } else if (program === 'eval') {
      if (args.some((w) => w.dynamic)) {
        this.push(command, { cwd, invocation, opaque: 'eval of text computed at run time' });
        return;
      }
      this.push(command, { cwd, invocation, wrapper: true });
      this.nested(args.map((w) => w.value).join(' '), here);
      return;
    } else if (interpreterName(program) !== undefined) {
      const codeFlag =
        inlineCodeFlag(args, INTERPRETERS.get(interpreterName(program) as string) as readonly string[]) ??
        (NODE_PROGRAMS.has(program) ? args.find((w) => /\bdata:/.test(w.value))?.value : undefined);
      if (codeFlag !== undefined) {
        this.push(command, {
          cwd,
          invocation,
          opaque: `${program} ${codeFlag} runs code given as text`,
        });
        return;
      }
      const operands = args.filter((w) => !w.value.startsWith('-') || w.value === '-');
      const source = scriptSource(operands[0]);
      if (source === 'device') {
        this.push(command, { cwd, invocation, opaque: `${program} runs a script from a descriptor` });
        return;
      }
      if (operands[0]?.dynamic) {
        this.push(command, { cwd, invocation, opaque: `${program} runs a script computed at run time` });
        return;
      }
      if (operands.length === 0 || source === 'stdin') {
        this.stdinScript(command, cwd, invocation, true);
        return;
      }
    } else if (isScriptProgram(program)) {
      const variables = this.variables(command, words)?.map((v) => v.name) ?? ['AWKPATH'];
      const opaque = scriptProgramEffects(program, args, variables)?.opaque;
      if (opaque !== undefined) {
        this.push(command, { cwd, invocation, opaque });
        return;
      }
    } else if (
      (program === 'source' || program === '.') &&
      args[0] !== undefined &&
      (args[0].dynamic || args[0].value.startsWith('/dev/'))
    ) {
      this.push(command, {
        cwd,
        invocation,
        opaque: `${program} reads a script computed at run time`,
      });
      return;
    } else if (program === 'find') {
      this.find(command, cwd, invocation);
      return;
    } else if (SUBCOMMAND_TOOLS.has(program)) {
      const global = GLOBAL_OPTIONS.get(program);
      const read = readOptions(args, global);
      const runs =
        program === 'git'
          ? gitRunsProgram(read.options, this.variables(command, words) ?? [{ name: 'GIT_DIR', value: '$' }])
          : undefined;
      if (runs !== undefined) {
        this.push(command, { cwd, invocation, opaque: runs });
        return;
      }
      const sub = read.operands[0];
      const subRuns =
        program === 'git' && sub !== undefined && !sub.dynamic
          ? gitSubcommandRuns(sub.value, read.operands.slice(1))
          : undefined;
      if (subRuns !== undefined) {
        this.push(command, { cwd, invocation, opaque: subRuns });
        return;
      }
      if (sub !== undefined && !sub.dynamic) {
        invocation.subcommand = sub.value;
        // The tool's own options are left out of args: they are not the subcommand's.
        args = read.operands.slice(1);
        invocation.args = args;
      }
    }
    this.push(command, { cwd, invocation });
  }

  /** A builtin that runs text: its scripts are listed, run later in a directory not known now. */
  private builtin(
    command: ShellCommand,
    cwd: string | undefined,
    invocation: Invocation,
    code: BuiltinCode,
  ): void {
    const wrapper = code.opaque === undefined && code.scripts.length > 0;
    this.push(command, {
      cwd,
      invocation,
      wrapper,
      ...(code.opaque === undefined ? {} : { opaque: code.opaque }),
    });
    for (const script of code.scripts) this.later(script, command);
  }

  /** A shell or interpreter reading its program from standard input. */
  private stdinScript(
    command: ShellCommand,
    cwd: string | undefined,
    invocation: Invocation,
    interpreter = false,
  ): void {
    const input = [...command.redirections]
      .reverse()
      .find((r) => (r.fd === undefined || r.fd === 0) && r.op.startsWith('<'));
    if (input === undefined && command.pipedInput) {
      this.push(command, {
        cwd,
        invocation,
        opaque: `${invocation.program} runs a script piped into it`,
      });
      return;
    }
    if (input === undefined || (input.op === '<' && !input.target.dynamic)) {
      this.push(command, { cwd, invocation });
      return;
    }
    const body =
      input.op === '<<<' ? (input.target.dynamic ? undefined : `${input.target.value}\n`) : input.body;
    const expands = input.op !== '<<<' && !/['"\\]/.test(input.target.raw) && /[$`]/.test(body ?? '');
    if (interpreter || body === undefined || expands || input.op === '<') {
      this.push(command, {
        cwd,
        invocation,
        opaque: `${invocation.program} runs a script that is not written out`,
      });
      return;
    }
    this.push(command, { cwd, invocation, wrapper: true });
    this.nested(body, { ...command, cwd });
  }

  /** `find … -exec CMD … ;` runs CMD once per file, `{}` standing for the file. */
  private find(command: ShellCommand, cwd: string | undefined, invocation: Invocation): void {
    this.push(command, { cwd, invocation });
    const args = invocation.args;
    for (let i = 0; i < args.length; i++) {
      if (!/^-(?:exec|execdir|ok|okdir)$/.test(args[i]?.value ?? '')) continue;
      const inner: ShellWord[] = [];
      for (i++; i < args.length && args[i]?.value !== ';' && args[i]?.value !== '+'; i++) {
        const w = args[i] as ShellWord;
        inner.push(w.value.includes('{}') ? { ...w, dynamic: true } : w);
      }
      if (inner.length > 0 && command.depth + 1 <= MAX_SHELL_NESTING)
        this.resolve({
          ...command,
          depth: command.depth + 1,
          cwd,
          words: inner,
          assignments: [],
          redirections: [],
          pipedInput: false,
        });
    }
  }
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Every simple command a command line runs, resolved to its program where that can be known. The
 * analysis depends on the text alone and no caller changes it: memoised, so the boundary's reading
 * of a call's files and the judge's reading of the same call parse it once.
 */
export const splitShellCommand: (command: string) => ShellAnalysis = memoString(
  (command) => {
    const resolver = new Resolver();
    resolver.add(parseShell(command));
    return resolver.finish();
  },
  { entries: 64, maxLength: 16 * 1024 },
);

export { word as staticWord };
