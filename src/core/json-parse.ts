/**
 * A strict JSON parser (RFC 8259) for input Tally must not misread: it refuses duplicate object
 * keys, lone surrogates (raw or escaped), and integers beyond 2^53 - 1, and reports the byte offset
 * and JSON pointer at fault. JSON.parse silently keeps the last duplicate, which would let two
 * readers of the same bytes disagree.
 */
import { CanonicalError, type CanonicalErrorCode } from './canonical.js';

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Parser {
  private i = 0;
  private readonly path: (string | number)[] = [];

  constructor(private readonly text: string) {}

  fail(code: CanonicalErrorCode, what: string, at = this.i): never {
    const byte = Buffer.byteLength(this.text.slice(0, at), 'utf8');
    const pointer = this.path
      .map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`)
      .join('');
    throw new CanonicalError(code, `${what} at byte ${byte}${pointer ? ` (in ${pointer})` : ''}`, {
      byte,
      pointer,
    });
  }

  skip(): void {
    while (this.i < this.text.length && WS.has(this.text.charCodeAt(this.i))) this.i++;
  }

  parseDocument(): unknown {
    this.skip();
    const value = this.value();
    this.skip();
    if (this.i < this.text.length) this.fail('syntax', 'unexpected content after the JSON value');
    return value;
  }

  value(): unknown {
    const c = this.text[this.i];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail(
          'syntax',
          c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`,
        );
    }
  }

  literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.i)) this.fail('syntax', `invalid literal (expected ${word})`);
    this.i += word.length;
    return value;
  }

  number(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.text);
    if (!m) return this.fail('syntax', 'invalid number');
    const start = this.i;
    this.i += m[0].length;
    const value = Number(m[0]);
    if (!Number.isFinite(value)) this.fail('non-finite', `number ${m[0]} overflows`, start);
    // Only integer literals: "1e30" is a float by its spelling, "9007199254740993" claims exactness.
    if (/^-?\d+$/.test(m[0]) && !Number.isSafeInteger(value)) {
      this.fail('unsafe-integer', `integer ${m[0]} is outside ±(2^53 - 1) and would lose precision`, start);
    }
    return value;
  }

  string(): string {
    const start = this.i;
    this.i++; // opening quote
    let out = '';
    let run = this.i;
    for (;;) {
      if (this.i >= this.text.length) this.fail('syntax', 'unterminated string', start);
      const code = this.text.charCodeAt(this.i);
      if (code === 0x22) break;
      if (code < 0x20)
        this.fail('syntax', `unescaped control character U+${code.toString(16).padStart(4, '0')} in string`);
      if (code === 0x5c) {
        out += this.text.slice(run, this.i);
        out += this.escape();
        run = this.i;
        continue;
      }
      this.i++;
    }
    out += this.text.slice(run, this.i);
    this.i++; // closing quote
    if (!out.isWellFormed()) this.fail('lone-surrogate', 'string contains a lone surrogate', start);
    return out;
  }

  escape(): string {
    const c = this.text[this.i + 1];
    this.i += 2;
    switch (c) {
      case '"':
        return '"';
      case '\\':
        return '\\';
      case '/':
        return '/';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'u': {
        const hex = this.text.slice(this.i, this.i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('syntax', 'invalid \\u escape', this.i - 2);
        this.i += 4;
        return String.fromCharCode(Number.parseInt(hex, 16));
      }
      default:
        return this.fail('syntax', `invalid escape \\${c ?? ''}`, this.i - 2);
    }
  }

  array(): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.skip();
    if (this.text[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      this.path.push(out.length);
      this.skip();
      out.push(this.value());
      this.path.pop();
      this.skip();
      const c = this.text[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail('syntax', "expected ',' or ']' in array", this.i - 1);
    }
  }

  object(): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.skip();
    if (this.text[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.skip();
      if (this.text[this.i] !== '"') this.fail('syntax', 'expected a string key');
      const keyAt = this.i;
      const key = this.string();
      if (seen.has(key)) this.fail('duplicate-key', `duplicate key ${JSON.stringify(key)}`, keyAt);
      seen.add(key);
      this.skip();
      if (this.text[this.i] !== ':') this.fail('syntax', "expected ':' after key");
      this.i++;
      this.skip();
      this.path.push(key);
      // defineProperty keeps "__proto__" an ordinary member instead of changing the prototype.
      Object.defineProperty(out, key, {
        value: this.value(),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.path.pop();
      this.skip();
      const c = this.text[this.i++];
      if (c === '}') return out;
      if (c !== ',') this.fail('syntax', "expected ',' or '}' in object", this.i - 1);
    }
  }
}

/** Parses JSON text strictly; throws CanonicalError with `detail.byte` and `detail.pointer`. */
export function parseJson(text: string | Uint8Array): unknown {
  const source = typeof text === 'string' ? text : new TextDecoder('utf-8', { fatal: true }).decode(text);
  return new Parser(source).parseDocument();
}
