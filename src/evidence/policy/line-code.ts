/**
 * A shell line that writes code and runs it: `echo 'rm -rf x' > s.sh; bash s.sh`, `printf … >
 * .git/hooks/pre-commit; git commit`, `echo 'all: …' > Makefile; make`, `echo '[alias] …' >>
 * .git/config; git x`. What a script in a file does is not read (docs/policy.md "Not covered"): the
 * file was there before the call, as the project's own code. Here the same call puts the code there
 * and runs it, so what runs is the line's own text, which the judge has not read as commands: the
 * call is opaque. The rules, with their examples, are docs/policy.md's "Code the line writes and
 * runs"; in short:
 *
 * - code the line puts in a file: what a redirection writes (unless the command printing runs the
 *   project's own code), what `tee`, `sponge`, `curl`, `wget`, an editor driven by the line's script
 *   or any command fed text on the line or through a pipe writes, and copies of those;
 * - files a command runs as code: its own path, a shell's or an interpreter's script (and what the
 *   interpreter tries: `python -m a.b`, `node x`), sed's and awk's program files, the command files
 *   of ed, ex, vim and sqlite3, make's makefiles; and what git (its hooks and settings, the hook
 *   managers' files), make (`*.mk`) and the package managers (`package.json`, `node_modules`, …)
 *   find by themselves;
 * - a write anywhere in the line counts but the running command's own; globs as bash expands them;
 *   a folder `cd` hides may be any; process substitutions, `mktemp` files and names known only at
 *   run time are not code.
 */
import { posix } from 'node:path';
import { fedText } from './command-runners.js';
import { plainWord, type WrittenWord } from './effect-words.js';
import { where } from './line-links.js';
import { isScriptProgram, scriptProgramEffects } from './script-programs.js';
import type { SimpleCommand } from './shell.js';
import { commandFileEffects } from './shell-effects.js';
import type { ShellWord } from './shell-grammar.js';
import { readOptions } from './shell-options.js';
import { interpreterName, SHELL_OPTIONS, SHELLS } from './shell-tables.js';

/** Interpreter options whose value is a file of code it loads before the script. */
const CODE_OPTIONS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-f']);
/** Interpreter options whose value is not the script (`python3 -W ignore s.py`, `ruby -I lib s.rb`). */
const VALUE_OPTIONS = new Set(['-W', '-X', '-Q', '-I', '-C', '-c', '-d', '--conditions', '--env-file']);
const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile'];
/** Programs that read commands of their own language from their input or a file an option names. */
const COMMAND_READERS = new Set(['ed', 'red', 'ex', 'vi', 'vim', 'nvim', 'view', 'sqlite3']);
/** What node tries for a script named without its extension (`node x` runs `x.js`). */
const NODE_EXTENSIONS = ['.js', '.mjs', '.cjs', '/index.js'];
const PACKAGE_FILES = new Set(['package.json', '.npmrc', '.yarnrc', '.yarnrc.yml', '.pnpmfile.cjs']);
const PACKAGE_RUNNERS = new Set(['npm', 'npx', 'yarn', 'pnpm', 'pnpx', 'bun', 'corepack']);

/** What a command runs as code: files named on the line, and a rule for the files it finds itself. */
interface Code {
  files: ShellWord[];
  /** Whether a written place (absolute) is code the program finds. */
  finds?: (at: string, word: WrittenWord) => boolean;
}

const segments = (at: string): string[] => at.split('/');

/** Files a hook manager runs at `git commit` (husky, pre-commit, lefthook, lint-staged). */
const HOOK_MANAGER_FILES =
  /^(?:\.pre-commit-config\.yaml|\.?lefthook(?:-local)?\.ya?ml|\.lintstagedrc(?:\.[a-z]+)?|lint-staged\.config\.[cm]?js)$/;

/** Inside a `.git` folder, what git runs or takes settings from: its hooks and configuration. */
function gitCode(at: string): boolean {
  const parts = segments(at);
  const git = parts.lastIndexOf('.git');
  if (parts.includes('.husky') || HOOK_MANAGER_FILES.test(posix.basename(at))) return true;
  if (git < 0) return false;
  const inside = parts.slice(git + 1);
  return inside.includes('hooks') || /^config(?:\.worktree)?$/.test(inside[inside.length - 1] ?? '');
}

/** An interpreter's script file and the code files its options name. */
function interpreterCode(program: string, args: readonly ShellWord[]): ShellWord[] {
  const files: ShellWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as ShellWord;
    const v = w.value;
    if (v === '--') {
      if (args[i + 1] !== undefined) files.push(args[i + 1] as ShellWord);
      break;
    }
    if (CODE_OPTIONS.has(v) && !(program.startsWith('python') && v === '-r')) {
      if (args[i + 1] !== undefined) files.push(args[++i] as ShellWord);
      continue;
    }
    const eq = /^(--(?:require|import|loader|experimental-loader))=(.*)$/.exec(v);
    if (eq !== null) {
      files.push({ ...w, value: eq[2] as string });
      continue;
    }
    // `python -m a.b`: `a/b.py` or `a/b/__main__.py` where it runs.
    if (v === '-m' && program.startsWith('py') && args[i + 1] !== undefined) {
      const module = (args[i + 1] as ShellWord).value.replaceAll('.', '/');
      files.push({ ...w, value: `${module}.py` }, { ...w, value: `${module}/__main__.py` });
      break;
    }
    if (VALUE_OPTIONS.has(v)) {
      i++;
      continue;
    }
    if (v.startsWith('-') && v !== '-') continue;
    // `deno run s.ts`, `bun run s.ts`.
    if ((program === 'deno' || program === 'bun') && v === 'run' && args[i + 1] !== undefined) continue;
    files.push(w);
    if ((program === 'node' || program === 'nodejs') && !/\.[cm]?[jt]s$/.test(v))
      for (const extension of NODE_EXTENSIONS) files.push({ ...w, value: `${v}${extension}` });
    break;
  }
  return files;
}

/** What `command` runs as code; undefined when it runs none the line may have written. */
function codeOf(command: SimpleCommand, from: string): Code | undefined {
  const invocation = command.invocation;
  if (invocation === undefined) return undefined;
  const { program, args } = invocation;
  const files: ShellWord[] = [];
  const self = invocation.argv[0];
  if (self?.value.includes('/')) files.push(self);
  if (SHELLS.has(program)) {
    // The startup file a shell runs first (`BASH_ENV=f bash -c …`).
    for (const word of command.words) {
      const file = /^BASH_ENV=(.+)$/.exec(word)?.[1];
      if (file !== undefined && !file.includes('$')) files.push(plainWord(file));
    }
    const read = readOptions(args, SHELL_OPTIONS);
    // `-c` runs the text on the line (read as nested commands); `-s` and no operand, its input.
    if (!read.options.has('-c') && !read.options.has('-s') && read.operands[0] !== undefined)
      files.push(read.operands[0]);
  } else if (program === '.' || program === 'source') {
    if (args[0] !== undefined) files.push(args[0]);
  } else if (interpreterName(program) !== undefined || program === 'tsx' || program === 'ts-node') {
    files.push(...interpreterCode(program, args));
  } else if (COMMAND_READERS.has(program)) {
    // ed, ex and sqlite3 take commands from their input; vim and sqlite3 from files their options name.
    for (const r of command.redirections) if (r.op === '<' && (r.fd ?? 0) === 0) files.push(r.target);
    args.forEach((w, i) => {
      if (/^-(?:u|S|s|init)$/.test(w.value) && args[i + 1] !== undefined)
        files.push(args[i + 1] as ShellWord);
    });
  } else {
    const script = scriptProgramEffects(program, args);
    if (script !== undefined) files.push(...script.code);
  }
  if (program === 'make' || program === 'gmake')
    // A makefile may include any `*.mk` file.
    return { files: [...files, ...makefiles(args)], finds: (at) => at.endsWith('.mk') };
  if (program === 'git') {
    const runs = command.cwd === undefined ? null : posix.resolve(from, command.cwd);
    return {
      files,
      // Its hooks and settings, in the .git folder of the repository it runs in (and the hook
      // managers' files); a folder copied whole that holds where git runs may hold that .git too.
      finds: (at, word) =>
        gitCode(at) ||
        (word.tree !== undefined && (runs === null || runs === at || runs.startsWith(`${at}/`))),
    };
  }
  if (PACKAGE_RUNNERS.has(program))
    return {
      files,
      finds: (at) => PACKAGE_FILES.has(posix.basename(at)) || segments(at).includes('node_modules'),
    };
  return files.length > 0 ? { files } : undefined;
}

/** make's makefiles: `-f FILE` (`--file`, `--makefile`), else the default names, in `-C DIR`. */
function makefiles(args: readonly ShellWord[]): ShellWord[] {
  const given: ShellWord[] = [];
  let dir: ShellWord | undefined;
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as ShellWord;
    const v = w.value;
    const file = /^(?:-f|--file=|--makefile=)(.+)$/.exec(v);
    if (file !== null) given.push({ ...w, value: file[1] as string });
    else if ((v === '-f' || v === '--file' || v === '--makefile') && args[i + 1] !== undefined)
      given.push(args[++i] as ShellWord);
    const directory = /^(?:-C|--directory=)(.+)$/.exec(v);
    if (directory !== null) dir = { ...w, value: directory[1] as string };
    else if ((v === '-C' || v === '--directory') && args[i + 1] !== undefined) dir = args[++i] as ShellWord;
  }
  if (given.length > 0) return given;
  const names = MAKEFILES.map(plainWord);
  if (dir === undefined) return names;
  const at = dir;
  return names.map((w) => ({ ...w, value: posix.join(at.value, w.value), dynamic: at.dynamic }));
}

/**
 * Where a written word is: a path; a glob, matched as bash matches it (`*` and `?` within a name,
 * never a leading dot), with the folder before its first pattern; or null when only the run decides.
 * Undefined for what is not a file the line can run: a process substitution (`> >(tee …)`), or a
 * variable the line set to a new temporary file (`t=$(mktemp); … > "$t"`).
 */
type Place = string | { glob: RegExp; dir: string } | null;

function placeOf(
  command: SimpleCommand,
  word: ShellWord,
  from: string,
  temporary: ReadonlySet<string>,
): Place | undefined {
  if (/^[<>]\(/.test(word.raw)) return undefined;
  const variable = /^"?\$\{?([A-Za-z_]\w*)\}?"?$/.exec(word.raw)?.[1];
  if (variable !== undefined && temporary.has(variable)) return undefined;
  // A name known only at run time (`> "$LOG"`) is not taken for code: the same two steps in two
  // calls are a script in a file too (docs/policy.md, "Code the line writes and runs").
  if (word.dynamic) return undefined;
  if (!word.glob || word.dynamic || command.cwd === undefined) return where(command, word, from);
  const pattern = posix.resolve(from, command.cwd, word.value);
  const regex = globPattern(pattern);
  if (regex === null) return null;
  const first = pattern.search(/[*?[]/);
  return { glob: regex, dir: pattern.slice(0, pattern.lastIndexOf('/', first)) || '/' };
}

/** A bash glob as a regular expression over absolute paths; null for what it does not follow (extglob). */
function globPattern(pattern: string): RegExp | null {
  if (/[@!+*?]\(/.test(pattern)) return null;
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    const start = i === 0 || pattern[i - 1] === '/';
    if (c === '*' || c === '?') out += `${start ? '(?!\\.)' : ''}${c === '*' ? '[^/]*' : '[^/]'}`;
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) out += '\\[';
      else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/[\\\]]/g, '\\$&');
        out += `${start ? '(?!\\.)' : ''}[${body}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** True when a write at `place` may put code at `codeAt`. */
function covers(place: Place, word: WrittenWord, codeAt: string | null): boolean {
  if (place === null || codeAt === null || word.worktree) return true;
  if (typeof place !== 'string')
    return (
      place.glob.test(codeAt) ||
      (word.tree !== undefined && ancestors(codeAt).some((a) => place.glob.test(a)))
    );
  if (place === codeAt) return true;
  return word.tree !== undefined && (place === '/' || codeAt.startsWith(`${place}/`));
}

const ancestors = (at: string): string[] => {
  const out: string[] = [];
  for (let dir = posix.dirname(at); dir !== '/' && dir !== '.'; dir = posix.dirname(dir)) out.push(dir);
  return out;
};

/** Names a program may find code under, tried against a glob's folder to tell whether it can match one. */
const FOUND_TAILS = [
  '.git/config',
  '.git/hooks/pre-commit',
  '.husky/pre-commit',
  '.pre-commit-config.yaml',
  'lefthook.yml',
  'package.json',
  '.npmrc',
  '.yarnrc.yml',
  'node_modules/x/index.js',
  'Makefile',
  'rules.mk',
];

/** True when a write at `place` may be code a program finds by its own rule (`finds`). */
function found(place: Place, word: WrittenWord, finds: NonNullable<Code['finds']>): boolean {
  if (place === null) return true;
  if (typeof place === 'string') return finds(place, word);
  for (const depth of ['', 'a/', 'a/b/'])
    for (const tail of FOUND_TAILS) {
      const candidate = posix.join(place.dir, depth, tail);
      if (place.glob.test(candidate) && finds(candidate, word)) return true;
    }
  return false;
}

/**
 * Programs whose every write holds what the line gives them (their input, a script on the line) or
 * what they fetch from elsewhere.
 */
const LINE_WRITERS = new Set(['tee', 'sponge', 'perl', 'ruby', 'ed', 'ex', 'curl', 'wget']);
/** Programs that copy files: what they write holds line-given code when what they read does. */
const COPIES = new Set(['cp', 'mv', 'install', 'ln', 'rsync', 'dd']);

/** The most pairs (a run and a write, a copy and a write) compared one by one in a line. */
const MAX_PAIRS = 100_000;

interface Placed {
  by: SimpleCommand;
  index: number;
  word: WrittenWord;
  at: Place;
}

/** Variables the line sets to a new temporary file (`t=$(mktemp)`, `t="$(mktemp -d)"`). */
function temporaries(commands: readonly SimpleCommand[]): Set<string> {
  const out = new Set<string>();
  for (const command of commands)
    for (const word of command.words) {
      const name = /^([A-Za-z_]\w*)="?\$\(\s*mktemp\b[^;&|]*\)"?$/.exec(word)?.[1];
      if (name !== undefined) out.add(name);
    }
  return out;
}

/** The writes of the line that put text the line gives into a file (see the head of this file). */
function lineContent(
  commands: readonly SimpleCommand[],
  writes: readonly (readonly WrittenWord[])[],
  /** What each command runs as code (codeOf). */
  codes: readonly (Code | undefined)[],
  from: string,
): Placed[] {
  const temporary = temporaries(commands);
  const placed: Placed[] = [];
  const copies: number[] = [];
  const place = (command: SimpleCommand, index: number, word: WrittenWord) => {
    const at = placeOf(command, word, from, temporary);
    if (at !== undefined) placed.push({ by: command, index, word, at });
  };
  commands.forEach((command, index) => {
    const program = command.invocation?.program ?? '';
    // Fed text on the line or from a pipe: `… | sort -o f`, `cp /dev/stdin f <<< …`.
    const own = LINE_WRITERS.has(program) || isScriptProgram(program) || fedText(command);
    // What a program of the project prints (`node build.js > out.js`) is the project's output.
    const project = codes[index] !== undefined;
    for (const word of writes[index] ?? []) {
      const redirected = command.redirections.some((r) => r.target === word || r.target.raw === word.raw);
      if (own || (redirected && !project)) place(command, index, word);
    }
    if (COPIES.has(program) && (writes[index]?.length ?? 0) > 0) copies.push(index);
  });
  // A copy of such a file holds it too: until no copy adds one (a loop may copy back and forth).
  // Past MAX_PAIRS comparisons every copy is taken to hold such a file.
  if (copies.length * placed.length > MAX_PAIRS) {
    for (const index of copies)
      for (const word of writes[index] ?? []) place(commands[index] as SimpleCommand, index, word);
    return placed;
  }
  for (let added = true; added && placed.length > 0; ) {
    added = false;
    for (const index of copies) {
      const command = commands[index] as SimpleCommand;
      if (placed.some((p) => p.index === index)) continue;
      const copied = commandFileEffects(command).reads.some((r) => {
        const at = where(command, r, from);
        return placed.some(
          (p) =>
            covers(p.at, p.word, at) ||
            (at !== null && typeof p.at === 'string' && p.at.startsWith(`${at}/`)),
        );
      });
      if (!copied) continue;
      for (const word of writes[index] ?? []) place(command, index, word);
      added = true;
    }
  }
  return placed;
}

/**
 * Why the line is opaque when one of its commands runs code another of its commands puts in a file
 * (`writes[i]`: the files command `i` writes); undefined when none does.
 */
export function runsLineWrittenCode(
  commands: readonly SimpleCommand[],
  writes: readonly (readonly WrittenWord[])[],
  from = '/',
): string | undefined {
  if (!writes.some((w) => w.length > 0)) return undefined;
  const codes = commands.map((command) => codeOf(command, from));
  const runners = commands.flatMap((command, index) => {
    const code = codes[index];
    return code === undefined ? [] : [{ command, index, code }];
  });
  if (runners.length === 0) return undefined;
  const placed = lineContent(commands, writes, codes, from);
  // A hostile line of many writes and many runs: not compared pair by pair.
  if (runners.length * placed.length > MAX_PAIRS && placed.length > 0)
    return 'the line writes files and runs code too many times to compare which runs what it wrote';
  for (const { command, index, code } of runners) {
    // A code file named only at run time (`bash "$S"`) is not compared, as a write so named is not.
    const places = code.files.filter((f) => !f.dynamic).map((f) => ({ f, at: where(command, f, from) }));
    for (const p of placed) {
      if (p.index === index) continue;
      const hit = places.find((c) => covers(p.at, p.word, c.at));
      if (hit !== undefined)
        return `\`${p.by.text}\` writes \`${p.word.raw}\`, which \`${command.text}\` runs as code (\`${hit.f.raw}\`)`;
      if (code.finds !== undefined && found(p.at, p.word, code.finds))
        return `\`${p.by.text}\` writes \`${p.word.raw}\`, where \`${command.text}\` finds code it runs`;
    }
  }
  return undefined;
}
