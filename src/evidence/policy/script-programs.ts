/**
 * sed and awk: programs whose script, given on the line, decides which files they write and whether
 * they run commands (`sed 'w FILE'`, `sed 's/a/b/e'`, `awk '{ print > "FILE" }'`, `awk '{ system(…) }'`).
 * Their options are read with their manuals' tables (GNU sed 4; gawk 5 and mawk, whose `-W exec FILE`
 * names a program file), the script with sed-script.ts and awk-program.ts. A script the line does not
 * show — computed at run time, or read from the command's own input — is opaque; a script in a named
 * file is read as a file (what it holds is not seen: docs/policy.md, "Not covered").
 */

import { posix } from 'node:path';
import { readAwkProgram } from './awk-program.js';
import { plainWord, type Touched, values } from './effect-words.js';
import { readSedScript } from './sed-script.js';
import type { ShellWord } from './shell-grammar.js';
import { optionTableFor, readOptions } from './shell-options.js';
import { AWKS } from './shell-tables.js';

export interface ScriptEffects extends Touched {
  /** The program files it runs (`sed -f FILE`, `awk -f FILE`, `gawk -i FILE`), also among its reads. */
  code: ShellWord[];
  /** Why the command runs something the line does not show. */
  opaque?: string;
}

const SEDS = new Set(['sed', 'gsed']);

/**
 * A script file the line does not show (also make's makefile, command-runners.ts): the command's input (`-`, anything under /dev or /proc:
 * `/dev/stdin`, `//dev/./stdin`, `/proc/thread-self/fd/0`), a glob, or a name computed at run time.
 */
export const unseen = (w: ShellWord): boolean =>
  w.dynamic || w.glob || w.value === '-' || /^\/(?:dev|proc)(?:\/|$)/.test(posix.normalize(w.value));

/** A name a script gives for a file (awk's string literal, sed's filename; null: computed at run time). */
const named = (value: string | null, by: string): ShellWord =>
  value === null
    ? {
        raw: `<${by} output>`,
        value: `$${by.toUpperCase()}_OUTPUT`,
        dynamic: true,
        glob: false,
        tilde: false,
      }
    : plainWord(value);

/**
 * The backup `sed -i SUFFIX` keeps of a file: the file's name with SUFFIX after it, or SUFFIX with
 * each `*` replaced by the file's name (a `/` in it: a path of its own; GNU sed's manual).
 */
function backupOf(input: ShellWord, suffix: string): ShellWord {
  const name = posix.basename(input.value);
  if (!suffix.includes('*')) return { ...input, value: `${input.value}${suffix}` };
  const made = suffix.replaceAll('*', name);
  return { ...input, value: made.includes('/') ? made : posix.join(posix.dirname(input.value), made) };
}

/** True for the programs this module reads. */
export const isScriptProgram = (program: string): boolean => SEDS.has(program) || AWKS.has(program);

function sedEffects(args: readonly ShellWord[]): ScriptEffects {
  const { options, operands, words } = readOptions(args, optionTableFor('sed'));
  const files = values(words, 'file');
  const out: ScriptEffects = { reads: [], writes: [], code: files };
  const expressions = values(words, 'expression');
  const scripts = options.has('expression') || options.has('file') ? expressions : operands.slice(0, 1);
  const inputs = operands.slice(options.has('expression') || options.has('file') ? 0 : 1);
  out.reads.push(...files, ...inputs);
  if (options.has('in-place')) {
    out.writes.push(...inputs);
    const suffix = options.get('in-place')?.[0] ?? '';
    if (suffix !== '') for (const input of inputs) out.writes.push(backupOf(input, suffix));
  }
  if (files.some(unseen)) out.opaque = 'sed reads its script from its input or a name known at run time';
  if (scripts.some((w) => w.dynamic)) out.opaque ??= 'sed runs a script computed at run time';
  // With POSIXLY_CORRECT sed stops reading options at its script: `--sandbox` after it is a file.
  const scriptAt = args.indexOf(scripts[0] as ShellWord);
  const sandboxAt = args.findIndex((w) => /^--sa(?:n(?:d(?:b(?:o(?:x)?)?)?)?)?$/.test(w.value));
  if (options.has('sandbox') && (sandboxAt < scriptAt || options.has('expression'))) return out;
  const text = scripts.map((w) => w.value).join('\n');
  const script = readSedScript(text);
  for (const w of script.writes) out.writes.push(named(w, 'sed'));
  for (const r of script.reads) out.reads.push(named(r, 'sed'));
  if (script.runs) out.opaque ??= 'sed runs commands from its script (`e`)';
  if (script.error !== undefined) out.opaque ??= `sed's script could not be read: ${script.error}`;
  return out;
}

/**
 * `-W NAME[=VALUE]` is the long option `--NAME[=VALUE]` to gawk (`-W source=TEXT`) and mawk
 * (`-W exec FILE`, any abbreviation: `-We FILE`), so it is read as one.
 */
function longW(args: readonly ShellWord[]): ShellWord[] {
  const out: ShellWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as ShellWord;
    // A value given to -v or -F is never code; one computed at run time keeps its option.
    const fixed = w.dynamic && /^-[vF]./.test(w.raw) ? { ...w, dynamic: false } : w;
    if (w.value === '--' || fixed.dynamic || !w.value.startsWith('-') || w.value === '-') {
      out.push(...args.slice(i));
      break;
    }
    const named = w.value === '-W' ? args[++i]?.value : /^-W./.test(w.value) ? w.value.slice(2) : undefined;
    if (named !== undefined) {
      // mawk joins several with commas (`-Winteractive,exec`).
      for (const one of named.split(',')) if (one !== '') out.push({ ...w, value: `--${one}` });
      continue;
    }
    out.push(fixed);
    // The value of an option given apart (`-v x=1`, `-f FILE`) is not where the options end.
    if (/^-[fFvilEe]$/.test(w.value) && args[i + 1] !== undefined) out.push(args[++i] as ShellWord);
  }
  return out;
}

/** gawk's in-place editing, by name or path (`-i inplace`, `-f /usr/share/awk/inplace.awk`). */
const INPLACE = (w: ShellWord): boolean => /^inplace(?:\.awk)?$/.test(posix.basename(w.value));

function awkEffects(
  program: string,
  args: readonly ShellWord[],
  variables: readonly string[],
): ScriptEffects {
  const { options, operands, words } = readOptions(longW(args), optionTableFor('awk'));
  const files = values(words, 'file', 'exec');
  const includes = values(words, 'include');
  const out: ScriptEffects = {
    reads: [],
    writes: [],
    code: [...files, ...includes.filter((w) => !INPLACE(w))],
  };
  const sources = values(words, 'source');
  const fromText = files.length === 0 && !options.has('source');
  const programs = fromText ? operands.slice(0, 1) : sources;
  const inputs = operands.slice(fromText ? 1 : 0);
  const inputFiles = inputs.filter((w) => !/^[A-Za-z_]\w*=/.test(w.value));
  out.reads.push(...files, ...inputFiles);
  for (const [name, file] of [
    ['dump-variables', 'awkvars.out'],
    ['profile', 'awkprof.out'],
    ['pretty-print', 'awkprof.out'],
  ] as const) {
    if (!options.has(name)) continue;
    const to = values(words, name).filter((w) => w.value !== '');
    out.writes.push(...(to.length > 0 ? to : [plainWord(file)]));
  }
  const inPlace = [...includes, ...files].some(INPLACE);
  if (inPlace) out.writes.push(...inputFiles);
  out.reads.push(...includes.filter((w) => !INPLACE(w)));
  if (variables.includes('AWKPATH') && files.length + includes.length > 0)
    out.opaque = `${program} finds its program files in AWKPATH, set on the line`;
  if (options.has('load')) out.opaque ??= `${program} loads an extension (-l)`;
  if (options.has('debug'))
    out.opaque ??= `${program} runs its debugger, which reads commands from its input`;
  if ([...files, ...includes].some(unseen))
    out.opaque ??= `${program} reads its program from its input or a name known at run time`;
  if (programs.some((w) => w.dynamic)) out.opaque ??= `${program} runs a program computed at run time`;
  const sandbox = options.has('sandbox');
  const text = programs.map((w) => w.value).join('\n');
  const code = readAwkProgram(text);
  if (code.inPlace) out.writes.push(...inputFiles);
  // In place, what the program puts in ARGV is rewritten too, and a backup suffix
  // (`inplace::suffix`, `INPLACE_SUFFIX`) writes one more file per input: names known at run time.
  if ((inPlace || code.inPlace) && /ARGV|suffix|SUFFIX/.test([text, ...args.map((w) => w.value)].join('\n')))
    out.writes.push(named(null, program));
  if (sandbox) return out;
  for (const w of code.writes) out.writes.push(named(w, program));
  for (const r of code.reads) out.reads.push(named(r, program));
  if (code.runs !== undefined) out.opaque ??= `${program} runs commands: ${code.runs}`;
  if (code.error !== undefined) out.opaque ??= `${program}'s program could not be read: ${code.error}`;
  return out;
}

/** What a sed or awk command line reads, writes and runs; undefined for every other program. */
export function scriptProgramEffects(
  program: string,
  args: readonly ShellWord[],
  /** Names of the variables the line gives the command (`AWKPATH=… awk -f x`). */
  variables: readonly string[] = [],
): ScriptEffects | undefined {
  if (SEDS.has(program)) return sedEffects(args);
  if (AWKS.has(program)) return awkEffects(program, args, variables);
  return undefined;
}
