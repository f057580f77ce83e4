/**
 * A shell line that makes a link — or moves, copies or unpacks one into place (`tar -x`, `unzip`,
 * `cpio -i`, `rsync`) — and then writes where it put it: `ln -s protected out && echo x > out/a`,
 * `tar -xf a.tar -C sub && echo x > sub/f` where the archive holds `sub/f -> ../protected/f`. The
 * boundary resolves the links that exist when a call is judged (src/boundary/links.ts); one the same
 * line makes is not there yet, so where the later write lands is known only at run time, and the
 * call is opaque (docs/policy.md "Through links"). A hard link (`ln` without `-s`) counts as well:
 * writing it writes the file it shares (`ln`, `link`, `cp -l`).
 */
import { posix } from 'node:path';
import type { SimpleCommand } from './shell.js';
import type { WrittenWord } from './shell-effects.js';
import type { ShellWord } from './shell-grammar.js';

/**
 * cp options that copy a symbolic link as a link (a short-option cluster holding a, d, P, R or r),
 * or make links instead of copies (`-l` hard, `-s` symbolic).
 */
const CP_SHORT = /^-[^-]*[adPRrls]/;
const CP_LONG = /^--(archive|no-dereference|recursive|link|symbolic-link|preserve=.*\b(links|all)\b.*)$/;

/** Programs that unpack or mirror a tree someone else made: any name under where they write may be a link. */
const UNPACKERS = new Set(['unzip', 'cpio', 'rsync']);
/**
 * Whether the command can leave a link where it writes (`written`: what it writes). tar writes a
 * whole folder only when it extracts (shell-effects.ts reads its options); a computed option may be
 * `-x`.
 */
function placesLinks(command: SimpleCommand, written: readonly WrittenWord[]): boolean {
  const invocation = command.invocation;
  if (invocation === undefined) return false;
  if (invocation.program === 'ln' || invocation.program === 'link' || invocation.program === 'mv')
    return true;
  if (UNPACKERS.has(invocation.program)) return true;
  if (invocation.program === 'tar')
    return written.some((w) => w.tree !== undefined) || invocation.args.some((w) => w.dynamic);
  if (invocation.program !== 'cp') return false;
  return invocation.args.some((w) => w.dynamic || CP_SHORT.test(w.value) || CP_LONG.test(w.value));
}

/** Where a word of `command` is, absolute against `from`; null when only the run decides. */
export function where(command: SimpleCommand, word: ShellWord, from: string): string | null {
  if (word.dynamic || word.glob || command.cwd === undefined) return null;
  return posix.resolve(from, command.cwd, word.value);
}

/**
 * Why the line is opaque when one of its commands writes at or under a place an earlier command of
 * it left a link at (`writes[i]`: the files command `i` writes); undefined when none does.
 */
export function writeThroughLineLink(
  commands: readonly SimpleCommand[],
  writes: readonly (readonly WrittenWord[])[],
  from = '/',
): string | undefined {
  const placed: { at: string | null; by: string }[] = [];
  for (let i = 0; i < commands.length; i++) {
    const command = commands[i]!;
    const written = writes[i] ?? [];
    for (const word of placed.length === 0 ? [] : written) {
      const at = where(command, word, from);
      const hit = placed.find(
        (p) => p.at === null || at === null || at === p.at || at.startsWith(`${p.at}/`),
      );
      if (hit !== undefined)
        return `\`${hit.by}\` may leave a link where the line then writes \`${word.raw}\``;
    }
    if (placesLinks(command, written))
      for (const word of written) placed.push({ at: where(command, word, from), by: command.text });
  }
  return undefined;
}
