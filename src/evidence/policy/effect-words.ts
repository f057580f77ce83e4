/**
 * What every table of shell effects shares: the words a command reads and writes, how far below a
 * written folder it reaches, and how option values and tar's old-style letters become words.
 */

import type { ShellWord } from './shell-grammar.js';
import { optionTableFor } from './shell-options.js';

/** Appends without spreading: a command line can have more operands than a call has stack. */
export function pushAll(target: ShellWord[], ...lists: readonly ShellWord[][]): void {
  for (const list of lists) for (const item of list) target.push(item);
}

/**
 * How far below a written path a command reaches, when it is a folder: `all` of what it holds
 * (`rm -r`, `chmod -R`), or `some` of it that the line does not name (`tar -x`, `unzip`, a recursive
 * copy or a move into it). A forbid pattern under such a folder is touched (docs/policy.md, "Whole
 * folders").
 */
export type TreeReach = 'all' | 'some';

/**
 * A written word, with how far below it the command reaches when it is a folder; `implied`: the line
 * names no path, the command's own folder is meant (`git checkout main`, `tar -xf a.tar`);
 * `worktree`: git writes the whole working tree of the repository the folder is in, whose root the
 * line does not show.
 */
export type WrittenWord = ShellWord & { tree?: TreeReach; implied?: true; worktree?: true };

export interface Touched {
  reads: ShellWord[];
  writes: WrittenWord[];
}

/** The words, each marked as reaching `reach` below itself. */
export const reaching = (reach: TreeReach, words: readonly ShellWord[]): WrittenWord[] =>
  words.map((w) => ({ ...w, tree: reach }));

/** A word written out on the line as it is. */
export const plainWord = (value: string): ShellWord => ({
  raw: value,
  value,
  dynamic: false,
  glob: false,
  tilde: false,
});

/** The words that gave the named options their values (`readOptions(…).words`), in order. */
export const values = (words: ReadonlyMap<string, readonly ShellWord[]>, ...names: string[]): ShellWord[] =>
  names.flatMap((n) => words.get(n) ?? []);

/**
 * tar's words with its old-style first word (`tar cfI A.tar CMD f`) spelt out: each letter an
 * option, and those that take a value take the words after it in the letters' order, as tar reads
 * them.
 */
export function tarWords(args: readonly ShellWord[]): ShellWord[] {
  const first = args[0];
  if (first === undefined || first.dynamic || !/^[A-Za-z]+$/.test(first.value)) return [...args];
  const table = optionTableFor('tar');
  const out: ShellWord[] = [];
  let next = 1;
  for (const letter of first.value) {
    out.push({ ...first, value: `-${letter}` });
    const names = table?.short.get(letter) ?? [];
    if (names.some((n) => table?.valued.has(n)) && args[next] !== undefined)
      out.push(args[next++] as ShellWord);
  }
  return [...out, ...args.slice(next)];
}
