/**
 * A strict JSON parser (RFC 8259) for input Tally must not misread: it refuses duplicate object
 * keys, lone surrogates (raw or escaped), and integers beyond 2^53 - 1, and reports the byte offset
 * and JSON pointer at fault. JSON.parse silently keeps the last duplicate, which would let two
 * readers of the same bytes disagree.
 *
 * It reads with charCodeAt and builds the JSON pointer of a failure only while the failure unwinds,
 * so a valid document costs no path bookkeeping. Whitespace is skipped only where some follows,
 * a plain string is one slice, and duplicate keys are counted per object rather than looked up per
 * member; a failure re-reads the document in checking mode so the first fault in reading order is
 * the one reported. A JSON.parse fast path (plus a member count and a
 * walk to rule out duplicates, lone surrogates and unsafe integers) was measured and was no faster
 * on protocol-sized messages, so there is one reader and one source of every verdict.
 */

import { CanonicalError, type CanonicalErrorCode } from './canonical-error.js';
import { pointerOf } from './json.js';

/** A parse failure on its way out; the pointer is built while unwinding, never on success. */
class Failure {
  /** Path segments, innermost first. */
  readonly segments: (string | number)[] = [];
  constructor(
    readonly code: CanonicalErrorCode,
    readonly what: string,
    readonly at: number,
  ) {}
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isHex(code: number): boolean {
  return isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class Parser {
  private i = 0;

  constructor(
    private readonly text: string,
    private readonly checking = false,
    /** Integers past 2^53 and lone surrogates read as JSON.parse reads them, not refused. */
    private readonly inexact = false,
  ) {}

  fail(code: CanonicalErrorCode, what: string, at = this.i): never {
    throw new Failure(code, what, at);
  }

  skip(): void {
    const text = this.text;
    let i = this.i;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    this.i = i;
  }

  /** skip() when whitespace follows: compact JSON has none between tokens. */
  gap(): void {
    const c = this.text.charCodeAt(this.i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.skip();
  }

  parseDocument(): unknown {
    try {
      this.skip();
      const value = this.value();
      this.skip();
      if (this.i < this.text.length) this.fail('syntax', 'unexpected content after the JSON value');
      return value;
    } catch (error) {
      if (!(error instanceof Failure)) throw error;
      if (!this.checking) return new Parser(this.text, true, this.inexact).parseDocument();
      const byte = Buffer.byteLength(this.text.slice(0, error.at), 'utf8');
      const pointer = pointerOf(error.segments.reverse());
      throw new CanonicalError(
        error.code,
        `${error.what} at byte ${byte}${pointer ? ` (in ${pointer})` : ''}`,
        { byte, pointer },
      );
    }
  }

  value(): unknown {
    const c = this.text.charCodeAt(this.i);
    switch (c) {
      case 0x7b: // {
        return this.object();
      case 0x5b: // [
        return this.array();
      case 0x22: // "
        return this.string();
      case 0x74: // t
        return this.literal('true', true);
      case 0x66: // f
        return this.literal('false', false);
      case 0x6e: // n
        return this.literal('null', null);
      default:
        if (c === 0x2d || isDigit(c)) return this.number();
        return this.fail(
          'syntax',
          Number.isNaN(c)
            ? 'unexpected end of input'
            : `unexpected character ${JSON.stringify(this.text[this.i])}`,
        );
    }
  }

  literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.i)) this.fail('syntax', `invalid literal (expected ${word})`);
    this.i += word.length;
    return value;
  }

  /** RFC 8259 §6: -? int frac? exp?; a leading zero is a whole integer part. */
  number(): number {
    const text = this.text;
    const start = this.i;
    let i = start;
    if (text.charCodeAt(i) === 0x2d) i++;
    if (text.charCodeAt(i) === 0x30) i++;
    else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
    else this.fail('syntax', 'invalid number');
    let integer = true;
    if (text.charCodeAt(i) === 0x2e && isDigit(text.charCodeAt(i + 1))) {
      integer = false;
      i += 2;
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      let j = i + 1;
      const sign = text.charCodeAt(j);
      if (sign === 0x2b || sign === 0x2d) j++;
      if (isDigit(text.charCodeAt(j))) {
        integer = false;
        while (isDigit(text.charCodeAt(j))) j++;
        i = j;
      }
    }
    const literal = text.slice(start, i);
    this.i = i;
    const value = Number(literal);
    if (!Number.isFinite(value)) this.fail('non-finite', `number ${literal} overflows`, start);
    // Only integer literals: "1e30" is a float by its spelling, "9007199254740993" claims exactness.
    if (integer && !Number.isSafeInteger(value) && !this.inexact) {
      this.fail(
        'unsafe-integer',
        `integer ${literal} is outside ±(2^53 - 1) and would lose precision`,
        start,
      );
    }
    return value;
  }

  string(): string {
    const text = this.text;
    const start = this.i;
    let i = start + 1; // after the opening quote
    // Most strings are a plain run up to the closing quote: no escape, control character,
    // surrogate or end of input (NaN fails the first test), so they are one slice.
    for (;;) {
      const code = text.charCodeAt(i);
      if (code >= 0x20 && code !== 0x22 && code !== 0x5c && (code < 0xd800 || code > 0xdfff)) i++;
      else if (code === 0x22) {
        this.i = i + 1;
        return text.slice(start + 1, i);
      } else break;
    }
    let out = '';
    let run = start + 1;
    let surrogate = false;
    for (;;) {
      if (i >= text.length) this.fail('syntax', 'unterminated string', start);
      const code = text.charCodeAt(i);
      if (code === 0x22) break;
      if (code < 0x20) {
        this.i = i;
        this.fail('syntax', `unescaped control character U+${code.toString(16).padStart(4, '0')} in string`);
      }
      if (code === 0x5c) {
        out += text.slice(run, i);
        this.i = i;
        const unit = this.escape();
        if (unit.length === 1 && unit.charCodeAt(0) >= 0xd800 && unit.charCodeAt(0) <= 0xdfff)
          surrogate = true;
        out += unit;
        i = this.i;
        run = i;
        continue;
      }
      if (code >= 0xd800 && code <= 0xdfff) surrogate = true;
      i++;
    }
    out += text.slice(run, i);
    this.i = i + 1; // after the closing quote
    if (surrogate && !this.inexact && !out.isWellFormed())
      this.fail('lone-surrogate', 'string contains a lone surrogate', start);
    return out;
  }

  escape(): string {
    const c = this.text[this.i + 1];
    this.i += 2;
    if (c === 'u') {
      const at = this.i;
      for (let k = 0; k < 4; k++) {
        if (!isHex(this.text.charCodeAt(at + k))) this.fail('syntax', 'invalid \\u escape', at - 2);
      }
      this.i += 4;
      return String.fromCharCode(Number.parseInt(this.text.slice(at, at + 4), 16));
    }
    const simple = c === undefined ? undefined : ESCAPES[c];
    if (simple === undefined) return this.fail('syntax', `invalid escape \\${c ?? ''}`, this.i - 2);
    return simple;
  }

  array(): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.gap();
    if (this.text.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return out;
    }
    for (;;) {
      this.gap();
      try {
        out.push(this.value());
      } catch (error) {
        if (error instanceof Failure) error.segments.push(out.length);
        throw error;
      }
      this.gap();
      const c = this.text.charCodeAt(this.i++);
      if (c === 0x5d) return out;
      if (c !== 0x2c) this.fail('syntax', "expected ',' or ']' in array", this.i - 1);
    }
  }

  /**
   * Outside checking mode a duplicate key is found by count: a repeated key overwrites, so the
   * object ends with fewer own keys than members read (one Object.keys per object costs less than
   * a lookup per member). Any failure then re-reads the whole document in checking mode, which
   * looks each key up as it is read and so names the first fault in reading order.
   */
  object(): Record<string, unknown> {
    if (this.checking) return this.members(true);
    const open = this.i;
    const out = this.members(false);
    if (this.count !== Object.keys(out).length) this.fail('duplicate-key', 'duplicate key', open);
    return out;
  }

  /** Members read by the last `members` call. */
  private count = 0;

  members(checking: boolean): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    let count = 0;
    this.gap();
    if (this.text.charCodeAt(this.i) === 0x7d) {
      this.i++;
      this.count = 0;
      return out;
    }
    for (;;) {
      this.gap();
      if (this.text.charCodeAt(this.i) !== 0x22) this.fail('syntax', 'expected a string key');
      const keyAt = this.i;
      const key = this.string();
      if (checking && Object.hasOwn(out, key))
        this.fail('duplicate-key', `duplicate key ${JSON.stringify(key)}`, keyAt);
      this.gap();
      if (this.text.charCodeAt(this.i) !== 0x3a) this.fail('syntax', "expected ':' after key");
      this.i++;
      this.gap();
      let member: unknown;
      try {
        member = this.value();
      } catch (error) {
        if (error instanceof Failure) error.segments.push(key);
        throw error;
      }
      if (key === '__proto__') {
        // defineProperty keeps "__proto__" an ordinary member instead of changing the prototype.
        Object.defineProperty(out, key, {
          value: member,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        out[key] = member;
      }
      count++;
      this.gap();
      const c = this.text.charCodeAt(this.i++);
      if (c === 0x7d) {
        this.count = count;
        return out;
      }
      if (c !== 0x2c) this.fail('syntax', "expected ',' or '}' in object", this.i - 1);
    }
  }
}

/** Decodes UTF-8 and throws on malformed bytes; `decode` without `stream` keeps no state between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses JSON text strictly; throws CanonicalError with `detail.byte` and `detail.pointer`. With
 * `inexact`, an integer past 2^53 and a lone surrogate are read as JSON.parse reads them; every
 * other refusal (a duplicate key above all) stands.
 */
export function parseJson(text: string | Uint8Array, options?: { inexact?: boolean }): unknown {
  const source = typeof text === 'string' ? text : UTF8.decode(text);
  try {
    return new Parser(source, false, options?.inexact === true).parseDocument();
  } catch (error) {
    // Nesting deep enough to exhaust the stack is refused like any other malformed input.
    if (error instanceof RangeError) throw new CanonicalError('syntax', 'JSON nested too deeply to read', {});
    throw error;
  }
}
