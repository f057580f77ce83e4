/**
 * `apply_patch` run as a shell command. Codex intercepts it (`apply_patch <<'EOF' … EOF`, also
 * inside `bash -lc "…"`, or `apply_patch PATCH` as argv) and applies the patch itself, so the files
 * its headers name are the command's writes. A patch the line does not write out (read from a
 * pipe, a file, or a here-document whose body expands) is opaque.
 */

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
