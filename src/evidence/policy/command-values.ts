/**
 * Options whose value is a command line the program runs (through a shell, or as a program with
 * arguments), from each program's manual: tar `-I`/`--use-compress-program`, `--to-command`,
 * `--checkpoint-action=exec=…`, `-F`/`--info-script`/`--new-volume-script`, `--rsh-command`; rsync
 * `-e`/`--rsh`, `--rsync-path`; sort `--compress-program`; split `--filter`; zip `-TT`/`--unzip-command`. The
 * values are judged as command lines of their own (docs/policy.md, "Wrappers").
 */

import { tarWords } from './effect-words.js';
import type { ShellWord } from './shell-grammar.js';
import { optionTableFor, readOptions } from './shell-options.js';

const VALUED: ReadonlyMap<string, readonly string[]> = new Map([
  ['tar', ['use-compress-program', 'to-command', 'info-script', 'rsh-command']],
  ['rsync', ['rsh', 'rsync-path']],
  ['sort', ['compress-program']],
  ['split', ['filter']],
]);

/** The command lines a program's options give it to run; empty for most programs. */
export function commandValues(program: string, args: readonly ShellWord[]): ShellWord[] {
  if (program === 'zip') {
    // `-TT CMD` (also `-TTCMD`, `-TT=CMD`) is one option of two letters; getopt-style splitting
    // would read it as `-T -T`. `--unzip-command` in any abbreviation down to `--un`.
    const out: ShellWord[] = [];
    args.forEach((w, i) => {
      const next = args[i + 1];
      const long = /^--un[a-z-]*/.exec(w.value)?.[0];
      if (long !== undefined && !'--unzip-command'.startsWith(long)) return;
      const attached =
        long !== undefined ? w.value.slice(long.length) : /^-TT/.test(w.value) ? w.value.slice(3) : undefined;
      if (attached === undefined) return;
      if (attached === '' && next !== undefined) out.push(next);
      else if (attached !== '') out.push({ ...w, value: attached.replace(/^=/, '') });
    });
    return out;
  }
  const names = VALUED.get(program);
  if (names === undefined) return [];
  const { words } = readOptions(program === 'tar' ? tarWords(args) : args, optionTableFor(program));
  const out = names.flatMap((n) => words.get(n) ?? []);
  if (program === 'tar')
    for (const action of words.get('checkpoint-action') ?? [])
      if (action.value.startsWith('exec=')) out.push({ ...action, value: action.value.slice(5) });
  return out;
}
