/**
 * The meaning of a shell pattern such as `Bash(rm -rf *)`: a command matches when its program
 * (wrappers removed) is the pattern's program, it carries at least the pattern's options once both
 * are read with the program's option table, and its operands match the pattern's operand glob.
 * `rm -fr /`, `rm -r -f /` and `rm --recursive --force /` all match; `git -C . push --force`
 * matches `git push --force*`. Defined in docs/policy.md, "Matching rule".
 */

import { compileGlob, type Glob, globMatches, globParts } from '../../core/glob.js';
import type { SimpleCommand } from './shell.js';
import type { ShellWord } from './shell-grammar.js';
import { impliedOptions, optionTableFor, readOptions } from './shell-options.js';
import { SUBCOMMAND_TOOLS } from './shell-tables.js';

export interface CommandPattern {
  /** The program, lower-cased (forbid patterns compare program names case-insensitively). */
  program: string;
  subcommand?: string;
  /** Options the command must carry, each with a glob for its value when the pattern gives one. */
  options: { name: string; value?: Glob }[];
  /** Globs that distinct operands of the command must match, in this order. */
  operands: Glob[];
}

/** `yes`: it matches; `possible`: it would, if a word known only at run time were the right one. */
export type CommandMatch = 'yes' | 'possible' | 'no';

/** Characters that make a pattern a command line, not one command: those stay glob-only. */
const LINE_SYNTAX = /[|;&<>()`$"'\n]/;

function literal(value: string): ShellWord {
  return { raw: value, value, dynamic: false, glob: false, tilde: false };
}

/**
 * Reads a pattern's argument as one command, or undefined when it is not one (it spans several
 * commands, quotes, or has a star in the program name): such patterns match by glob only.
 */
export function compileCommandPattern(source: string): CommandPattern | undefined {
  if (LINE_SYNTAX.test(source)) return undefined;
  const words = source.split(/[ \t]+/).filter((w) => w !== '');
  const program = words[0];
  if (program === undefined || /[*\\]/.test(program)) return undefined;
  const last = words.length - 1;
  // A star glued to a last option or subcommand (`-rf*`, `push*`) reads as "and anything after":
  // operands beyond the pattern's are allowed anyway.
  const lastWord = words[last] as string;
  if (last > 0 && lastWord.endsWith('*') && !lastWord.endsWith('\\*') && lastWord.length > 1) {
    const trimmed = lastWord.slice(0, -1);
    if (trimmed.startsWith('-') || (last === 1 && !trimmed.includes('*'))) words[last] = trimmed;
  }
  const name = program.slice(program.lastIndexOf('/') + 1);
  let args = words.slice(1);
  let subcommand: string | undefined;
  if (SUBCOMMAND_TOOLS.has(name) && args[0] !== undefined && !args[0].startsWith('-')) {
    if (args[0].includes('*')) return undefined;
    subcommand = args[0];
    args = args.slice(1);
  }
  if (args.some((w) => w.startsWith('-') && w.includes('*'))) return undefined;
  const read = readOptions(args.map(literal), optionTableFor(name, subcommand));
  const options: CommandPattern['options'] = [];
  for (const [option, values] of read.options) {
    const value = values[0];
    options.push(value === undefined ? { name: option } : { name: option, value: glob(value) });
  }
  const operands = read.operands
    .filter((w) => w.value !== '*' || read.operands.length > 1)
    .map((w) => glob(w.value));
  const pattern: CommandPattern = { program: name.toLowerCase(), options, operands };
  if (subcommand !== undefined) pattern.subcommand = subcommand;
  return pattern;
}

function glob(text: string): Glob {
  return compileGlob(globParts(text), 'command');
}

/** Matches a pattern against one resolved simple command. */
export function matchCommand(pattern: CommandPattern, command: SimpleCommand): CommandMatch {
  const inv = command.invocation;
  if (inv === undefined) return 'no';
  if (inv.program.toLowerCase() !== pattern.program) {
    // A pattern naming a wrapper (`sudo *`) matches any command run through it.
    const wrapped = inv.wrappers.some((w) => w.toLowerCase() === pattern.program);
    const bare = pattern.options.length === 0 && pattern.subcommand === undefined;
    return wrapped && bare && pattern.operands.length === 0 ? 'yes' : 'no';
  }
  if (pattern.subcommand !== undefined && inv.subcommand !== pattern.subcommand) return 'no';
  const read = readOptions(inv.args, optionTableFor(inv.program, inv.subcommand));
  for (const operand of read.operands)
    for (const implied of impliedOptions(inv.program, inv.subcommand, operand.value))
      read.options.set(implied, []);
  let missing = false;
  for (const option of pattern.options) {
    const values = read.options.get(option.name);
    const value = option.value;
    if (values === undefined || (value !== undefined && !values.some((v) => globMatches(value, v))))
      missing = true;
  }
  const definite = !missing && operandsMatch(pattern.operands, read.operands, false);
  if (definite) return 'yes';
  return read.dynamic && operandsMatch(pattern.operands, read.operands, true) ? 'possible' : 'no';
}

/**
 * Each pattern operand glob matches a distinct operand, in order (greedy is exact for a
 * subsequence). With `dynamicMatches`, a word known only at run time may be any operand.
 */
function operandsMatch(
  globs: readonly Glob[],
  operands: readonly ShellWord[],
  dynamicMatches: boolean,
): boolean {
  let at = 0;
  for (const g of globs) {
    let found = false;
    while (!found && at < operands.length) {
      const operand = operands[at++] as ShellWord;
      found = operand.dynamic ? dynamicMatches : globMatches(g, operand.value);
    }
    if (!found) return false;
  }
  return true;
}
