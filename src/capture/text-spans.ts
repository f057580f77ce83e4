/**
 * Positions in a settings text: a reader's refusal at the line and column of an offset, and the
 * replacement of spans, which is how every in-place edit (JSONC, TOML) is applied.
 */
import { CaptureError } from './types.js';

/** A reader's refusal, at the line and column (1-based) of an offset in the text it read. */
export function failAt(text: string, at: number, message: string): never {
  const before = text.slice(0, at).split('\n');
  const line = before.length;
  const column = before.at(-1)!.length + 1;
  throw new CaptureError('bad-payload', `line ${line}, column ${column}: ${message}`, { line, column });
}

export interface Span {
  start: number;
  end: number;
  text: string;
}

/** Replacements of spans of a text, applied from the last so earlier offsets hold. */
export function splice(source: string, edits: readonly Span[]): string {
  let out = source;
  for (const e of [...edits].sort((a, b) => b.start - a.start || b.end - a.end))
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}
