/**
 * The file headers of an `apply_patch` envelope (`*** Add File: p`, `*** Update File: p`,
 * `*** Move to: q`, `*** Delete File: p`), read at least as widely as both parsers that apply one:
 *
 * - Codex (codex-rs/apply-patch/src/parser.rs): `str::lines` splits at `\n` (dropping a `\r`
 *   before it), `trim` takes Unicode white space off both ends of each line (U+0085, U+2028,
 *   U+2029 and a lone `\r` included), then `*** Add File: ` and its kin are stripped and the rest is
 *   the path; `*** Move to: ` is matched on the untrimmed line.
 * - OpenCode (packages/opencode/src/patch/index.ts): splits at `\n`, matches `*** Add File:` with
 *   or without a space after the colon, and trims the path.
 *
 * A header may therefore be indented, end in any white space, or lack the space: each such spelling
 * is a header here, and each path either parser would take is listed.
 */

export type PatchHeaderKind = 'Add File' | 'Update File' | 'Delete File' | 'Move to';

export interface PatchHeader {
  kind: PatchHeaderKind;
  /** The path as Codex reads it when Codex reads this line as a header, first; then any other reading. */
  paths: string[];
}

const HEADER = /^\*\*\* (Add File|Update File|Delete File|Move to):(.*)$/s;

/** Unicode white space as Rust's `trim` knows it (`\s` lacks U+0085). */
const white = (c: string | undefined): boolean => c !== undefined && (c === '\u0085' || /\s/.test(c));

/** `text` without white space at either end, in one pass (a trailing-run regex can be quadratic). */
function trim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && white(text[start])) start++;
  while (end > start && white(text[end - 1])) end--;
  return text.slice(start, end);
}

/** The lines of a patch as both parsers split it: at `\n` only, a `\r` before it dropped. */
export function patchLines(text: string): string[] {
  return text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

export function patchHeaders(text: string): PatchHeader[] {
  const out: PatchHeader[] = [];
  for (const line of patchLines(text)) {
    const trimmed = trim(line);
    const m = HEADER.exec(trimmed);
    if (m === null) continue;
    const kind = m[1] as PatchHeaderKind;
    const marker = `*** ${kind}: `;
    // Codex: the rest of the trimmed line after the marker (`Move to` on the line as it is).
    const exact = kind === 'Move to' ? line : trimmed;
    const paths = [exact.startsWith(marker) ? exact.slice(marker.length) : '', trim(m[2] as string)];
    const distinct = paths.filter((p, i) => p !== '' && paths.indexOf(p) === i);
    if (distinct.length > 0) out.push({ kind, paths: distinct });
  }
  return out;
}
