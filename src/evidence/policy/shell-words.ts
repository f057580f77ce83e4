/**
 * The two word transformations bash applies to text it can resolve without running anything:
 * ANSI-C quoting (`$'\x72m'`) and brace expansion (`{rm,-rf,/}` is three words). Both follow the
 * bash manual (QUOTING, Brace Expansion) and are checked against the real bash by the oracle tests.
 */

/** Brace expansion stops here; a word that would expand further is left as written and flagged. */
export const MAX_BRACE_WORDS = 256;
/** A word longer than this, or with more brace groups, is not expanded. */
const MAX_BRACE_TEXT = 2048;
const MAX_BRACE_GROUPS = 32;

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

function isHex(c: string | undefined): boolean {
  return c !== undefined && /[0-9A-Fa-f]/.test(c);
}

/**
 * Decodes the body of `$'…'` from `pos` (just after the opening quote). Returns the text and the
 * index after the closing quote (or the length when unterminated, with `closed` false).
 */
export function decodeAnsiC(src: string, pos: number): { text: string; end: number; closed: boolean } {
  let text = '';
  let i = pos;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "'") return { text, end: i + 1, closed: true };
    if (c !== '\\') {
      text += c;
      i++;
      continue;
    }
    const e = src[i + 1];
    if (e === undefined) {
      text += c;
      i++;
      continue;
    }
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      text += simple;
      i += 2;
    } else if (e >= '0' && e <= '7') {
      let j = i + 1;
      let digits = '';
      while (j < src.length && digits.length < 3 && (src[j] as string) >= '0' && (src[j] as string) <= '7')
        digits += src[j++];
      text += String.fromCharCode(Number.parseInt(digits, 8) & 0xff);
      i = j;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const max = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      let j = i + 2;
      let digits = '';
      while (j < src.length && digits.length < max && isHex(src[j])) digits += src[j++];
      if (digits === '') {
        text += `\\${e}`;
      } else {
        const code = Number.parseInt(digits, 16);
        text += e === 'x' ? String.fromCharCode(code) : String.fromCodePoint(Math.min(code, 0x10ffff));
      }
      i = j;
    } else if (e === 'c' && src[i + 2] !== undefined) {
      text += String.fromCharCode((src[i + 2] as string).charCodeAt(0) & 0x1f);
      i += 3;
    } else {
      text += `\\${e}`;
      i += 2;
    }
  }
  return { text, end: src.length, closed: false };
}

/** `a..e`, `1..10`, `1..10..2`: the words of a sequence expression, or undefined if it is not one. */
function sequence(body: string): string[] | undefined {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (m === null) return undefined;
  const [, from = '', to = '', stepText] = m;
  const numeric = /\d/.test(from);
  if (numeric !== /\d/.test(to)) return undefined;
  const a = numeric ? Number(from) : from.charCodeAt(0);
  const b = numeric ? Number(to) : to.charCodeAt(0);
  const step = Math.abs(Number(stepText ?? '1')) || 1;
  if (Math.abs(b - a) / step >= MAX_BRACE_WORDS) return undefined;
  const width = numeric && (/^-?0\d/.test(from) || /^-?0\d/.test(to)) ? Math.max(from.length, to.length) : 0;
  const out: string[] = [];
  for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step) {
    if (!numeric) out.push(String.fromCharCode(v));
    else if (width === 0) out.push(String(v));
    else out.push((v < 0 ? '-' : '') + String(Math.abs(v)).padStart(width - (v < 0 ? 1 : 0), '0'));
  }
  return out;
}

/**
 * Brace expansion of one word. `marks[i]` is 1 where `text[i]` is an unquoted `{`, `,` or `}`
 * (quoted ones are literal). Returns the words, or undefined when there would be more than
 * MAX_BRACE_WORDS.
 */
export function expandBraces(text: string, marks: Uint8Array): string[] | undefined {
  // Past these sizes the expansion is not attempted (the word stays as written, the reading
  // incomplete): each level of a nested product copies the word, so work must stay bounded.
  if (text.length > MAX_BRACE_TEXT) return undefined;
  let groups = 0;
  for (let i = 0; i < text.length; i++)
    if (marks[i] === 1 && text[i] === '{' && ++groups > MAX_BRACE_GROUPS) return undefined;
  return expandWithin(text, marks);
}

function expandWithin(text: string, marks: Uint8Array): string[] | undefined {
  for (let i = 0; i < text.length; i++) {
    if (marks[i] !== 1 || text[i] !== '{') continue;
    let depth = 0;
    let close = -1;
    const commas: number[] = [];
    for (let j = i + 1; j < text.length; j++) {
      if (marks[j] !== 1) continue;
      const c = text[j];
      if (c === '{') depth++;
      else if (c === '}') {
        if (depth === 0) {
          close = j;
          break;
        }
        depth--;
      } else if (c === ',' && depth === 0) commas.push(j);
    }
    if (close < 0) continue;
    const prefix = text.slice(0, i);
    const suffixText = text.slice(close + 1);
    const suffixMarks = marks.slice(close + 1);
    const pieces: [string, Uint8Array][] = [];
    if (commas.length === 0) {
      const words = sequence(text.slice(i + 1, close));
      if (words === undefined) continue;
      for (const w of words) pieces.push([w, new Uint8Array(w.length)]);
    } else {
      let from = i + 1;
      for (const end of [...commas, close]) {
        pieces.push([text.slice(from, end), marks.slice(from, end)]);
        from = end + 1;
      }
    }
    const out: string[] = [];
    for (const [piece, pieceMarks] of pieces) {
      const joined = new Uint8Array(i + pieceMarks.length + suffixMarks.length);
      joined.set(marks.subarray(0, i), 0);
      joined.set(pieceMarks, i);
      joined.set(suffixMarks, i + pieceMarks.length);
      const inner = expandWithin(prefix + piece + suffixText, joined);
      if (inner === undefined || out.length + inner.length > MAX_BRACE_WORDS) return undefined;
      out.push(...inner);
    }
    return out;
  }
  return [text];
}
