/**
 * The scanning pieces every redaction rule shares: spans replaced by the marker, the end of a
 * value found by one forward scan, and heads found by short bounded regexes, so every rule stays
 * linear in its input.
 */

/** What every secret becomes. */
export const REDACTED = '[REDACTED]';

export type Span = { start: number; end: number };

/** Replaces each span (sorted, disjoint) with the marker. */
export function applySpans(text: string, spans: Span[]): string {
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start) + REDACTED;
    at = span.end;
  }
  return out + text.slice(at);
}

export const BLANK = /\s/;

/**
 * A value that names where the secret comes from at run time (`$(cat tok)`, `"$TOKEN"`, `${X}`,
 * a backtick substitution) holds no secret literal: the command is recorded as written.
 */
export function isReference(text: string, i: number): boolean {
  const at = text[i] === '"' ? i + 1 : i;
  const c = text[at];
  const next = text[at + 1] ?? '';
  return c === '`' || (c === '$' && (next === '(' || next === '{' || /[A-Za-z_]/.test(next)));
}

/**
 * The end of a value starting at `i`: a quoted string (to its closing quote, or the end of the text),
 * else a run of characters up to whitespace or one of `stops`.
 */
export function valueEnd(text: string, i: number, stops: string): number {
  const quote = text[i];
  if (quote === '"' || quote === "'") {
    let j = i + 1;
    while (j < text.length && text[j] !== quote) j += quote === '"' && text[j] === '\\' ? 2 : 1;
    return Math.min(j + 1, text.length);
  }
  let j = i;
  while (j < text.length && !BLANK.test(text[j] as string) && !stops.includes(text[j] as string)) j++;
  return j;
}

/**
 * Runs `head` (a global regex) over the text; for each hit `pick` returns the span to redact (or
 * undefined) and the scan resumes after that span, so nothing is scanned twice.
 */
export function redactAfterHeads(
  text: string,
  head: RegExp,
  pick: (m: RegExpExecArray) => Span | undefined,
): string {
  const spans: Span[] = [];
  head.lastIndex = 0;
  for (let m = head.exec(text); m !== null; m = head.exec(text)) {
    const span = pick(m);
    if (span !== undefined && span.end > span.start && text.slice(span.start, span.end) !== REDACTED) {
      spans.push(span);
      head.lastIndex = Math.max(head.lastIndex, span.end);
    }
    if (m[0].length === 0) head.lastIndex++;
  }
  return applySpans(text, spans);
}

export const after = (m: RegExpExecArray): number => m.index + m[0].length;
