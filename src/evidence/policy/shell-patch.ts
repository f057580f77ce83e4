/**
 * `apply_patch` run as a shell command. Codex intercepts it (`apply_patch <<'EOF' … EOF`, also
 * inside `bash -lc "…"`, or `apply_patch PATCH` as argv) and applies the patch itself, so the files
 * its headers name are the command's writes. A patch the line does not write out (read from a
 * pipe, a file, or a here-document whose body expands) is opaque.
 *
 * Codex also intercepts `cd DIR && apply_patch <<'EOF'` and applies the patch in DIR as its bash
 * grammar has the word written (codex-rs/apply-patch/src/invocation.rs,
 * `extract_apply_patch_from_bash`): nothing unescaped, so `cd a\ b` is the folder `a\ b` to Codex and
 * `a b` to bash (measured with the pinned Codex: `cd safe\x && apply_patch` wrote through a link
 * named `safe\x`). The patch's files are read in both folders.
 */

import { posix } from 'node:path';
import type { Redirection, ShellWord } from './shell-grammar.js';

export const PATCH_PROGRAMS = new Set(['apply_patch', 'applypatch']);

/** The patch text an `apply_patch` command applies, when the line writes it out. */
export function patchText(
  args: readonly ShellWord[],
  redirections: readonly Redirection[],
  pipedInput: boolean,
): string | undefined {
  const operand = args[0];
  if (operand !== undefined) return operand.dynamic ? undefined : operand.value;
  const input = [...redirections]
    .reverse()
    .find((r) => (r.fd === undefined || r.fd === 0) && r.op.startsWith('<'));
  if (input === undefined || pipedInput) return undefined;
  if (input.op === '<<<') return input.target.dynamic ? undefined : input.target.value;
  if (input.op !== '<<' && input.op !== '<<-') return undefined;
  // An unquoted delimiter expands the body: `$(…)` there could name any file.
  const expands = !/['"\\]/.test(input.target.raw) && /[$`]/.test(input.body ?? '');
  return expands ? undefined : input.body;
}

/**
 * The folder a patch command's relative paths lie in when its `cd`s are read as written, as a path
 * from the folder bash runs it in (absolute when the `cd` was): undefined when the two are one
 * folder, null when the one cannot be said from the other (the written one unknowable, or relative
 * to a start the bash folder has left by `..` or an absolute `cd`).
 */
export function patchFolderAsWritten(command: {
  cwd: string | undefined;
  asWritten?: { cwd: string | undefined };
}): string | undefined | null {
  const written = command.asWritten?.cwd;
  const cwd = command.cwd;
  if (command.asWritten === undefined || cwd === undefined || written === cwd) return undefined;
  if (written === undefined) return null;
  if (posix.isAbsolute(written)) return written;
  if (posix.isAbsolute(cwd) || cwd === '..' || cwd.startsWith('../')) return null;
  // Back from `cwd` to where the line started, then into the folder as written.
  const back = cwd === '.' ? [] : cwd.split('/').map(() => '..');
  return posix.join(...back, written);
}
