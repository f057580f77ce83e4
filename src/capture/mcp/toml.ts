/**
 * A TOML reader that keeps positions: every table header and every key/value statement of a
 * document with its full key path, its decoded value and where its value and its line are in the
 * text, so that a caller can replace one value and leave every other byte (comments, spacing,
 * other tables) as it was. It reads TOML 1.0 (and 1.1's newlines in inline tables); strings,
 * arrays and inline tables are decoded, other values (numbers, booleans, dates) kept as their
 * text. A document it cannot read is refused with the line and column, never guessed at.
 */
import { failAt } from '../text-spans.js';

/** A value that is neither a string, an array nor an inline table: its text as written. */
export class TomlScalar {
  constructor(readonly raw: string) {}
}

export type TomlValue = string | TomlScalar | TomlValue[] | { [key: string]: TomlValue };

export interface TomlStatement {
  /** The table it is under (`[a.b]` → ['a', 'b']; [] at the top). */
  table: string[];
  /** Its own key, dotted keys split (`x.y = 1` → ['x', 'y']). */
  key: string[];
  value: TomlValue;
  /** The value's text: [valueStart, valueEnd). */
  valueStart: number;
  valueEnd: number;
  /** The statement's whole line: from its key to after its newline (or the end of the text). */
  start: number;
  end: number;
}

export interface TomlTable {
  path: string[];
  /** `[[path]]`: an element of an array of tables. */
  array: boolean;
  start: number;
}

export interface TomlDocument {
  tables: TomlTable[];
  statements: TomlStatement[];
}

const BARE_KEY = /[A-Za-z0-9_-]/;
const SCALAR = /^(?:[A-Za-z0-9_.:+-]+|\d{4}-\d{2}-\d{2} [0-9:.+Z-]+)$/;
const ESCAPES: Record<string, string> = {
  b: '\b',
  t: '\t',
  n: '\n',
  f: '\f',
  r: '\r',
  e: '\x1b',
  '"': '"',
  '\\': '\\',
};
/** The escapes a TOML 1.0 reader knows (\e is 1.1's), by the character they stand for. */
const WRITTEN: Record<string, string> = {
  '\b': 'b',
  '\t': 't',
  '\n': 'n',
  '\f': 'f',
  '\r': 'r',
  '"': '"',
  '\\': '\\',
};

class Reader {
  i = 0;
  constructor(readonly text: string) {}

  fail(message: string, at = this.i): never {
    failAt(this.text, at, message);
  }

  peek(n = 0): string {
    return this.text[this.i + n] ?? '';
  }

  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.i);
  }

  expect(s: string): void {
    if (!this.startsWith(s)) this.fail(`expected '${s}'`);
    this.i += s.length;
  }

  spaces(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
  }

  comment(): void {
    if (this.peek() !== '#') return;
    while (this.i < this.text.length && this.peek() !== '\n') this.i++;
    if (this.text[this.i - 1] === '\r') this.i--;
  }

  /** Spaces, comments and newlines (inside arrays and inline tables). */
  blank(): void {
    for (;;) {
      this.spaces();
      this.comment();
      if (this.peek() === '\n') this.i++;
      else if (this.startsWith('\r\n')) this.i += 2;
      else return;
    }
  }

  /** The rest of a line after a statement: spaces, a comment, then a newline or the end. */
  lineEnd(): void {
    this.spaces();
    this.comment();
    if (this.i >= this.text.length) return;
    if (this.peek() === '\n') this.i++;
    else if (this.startsWith('\r\n')) this.i += 2;
    else this.fail('expected the end of the line');
  }

  key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.spaces();
      parts.push(this.simpleKey());
      this.spaces();
      if (this.peek() !== '.') return parts;
      this.i++;
    }
  }

  simpleKey(): string {
    if (this.peek() === '"') return this.basic();
    if (this.peek() === "'") return this.literal();
    const start = this.i;
    while (BARE_KEY.test(this.peek())) this.i++;
    if (this.i === start) this.fail('expected a key');
    return this.text.slice(start, this.i);
  }

  value(): TomlValue {
    const c = this.peek();
    if (this.startsWith('"""')) return this.multiline('"""');
    if (this.startsWith("'''")) return this.multiline("'''");
    if (c === '"') return this.basic();
    if (c === "'") return this.literal();
    if (c === '[') return this.array();
    if (c === '{') return this.inlineTable();
    const start = this.i;
    while (this.i < this.text.length && !/[,\]}#\r\n]/.test(this.peek())) this.i++;
    const raw = this.text.slice(start, this.i).trimEnd();
    this.i = start + raw.length;
    if (!SCALAR.test(raw)) this.fail('expected a value', start);
    return new TomlScalar(raw);
  }

  array(): TomlValue[] {
    this.expect('[');
    const items: TomlValue[] = [];
    for (;;) {
      this.blank();
      if (this.peek() === ']') break;
      items.push(this.value());
      this.blank();
      if (this.peek() === ',') this.i++;
      else if (this.peek() !== ']') this.fail("expected ',' or ']'");
    }
    this.i++;
    return items;
  }

  inlineTable(): { [key: string]: TomlValue } {
    this.expect('{');
    const table: { [key: string]: TomlValue } = {};
    for (;;) {
      this.blank();
      if (this.peek() === '}') break;
      const at = this.i;
      const key = this.key();
      this.expect('=');
      this.spaces();
      assign(table, key, this.value(), () => this.fail(`the key ${key.join('.')} is defined twice`, at));
      this.blank();
      if (this.peek() === ',') this.i++;
      else if (this.peek() !== '}') this.fail("expected ',' or '}'");
    }
    this.i++;
    return table;
  }

  basic(): string {
    const start = this.i;
    this.expect('"');
    let out = '';
    for (;;) {
      const c = this.peek();
      if (c === '' || c === '\n') this.fail('unterminated string', start);
      this.i++;
      if (c === '"') return out;
      out += c === '\\' ? this.escape() : c;
    }
  }

  escape(): string {
    const c = this.peek();
    this.i++;
    if (ESCAPES[c] !== undefined) return ESCAPES[c];
    const digits = c === 'u' ? 4 : c === 'U' ? 8 : c === 'x' ? 2 : 0;
    const hex = this.text.slice(this.i, this.i + digits);
    if (digits === 0 || !/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== digits)
      this.fail(`unknown escape '\\${c}'`, this.i - 2);
    this.i += digits;
    const code = Number.parseInt(hex, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      this.fail('escape is not a Unicode scalar value');
    return String.fromCodePoint(code);
  }

  literal(): string {
    this.expect("'");
    const start = this.i;
    while (this.peek() !== "'") {
      if (this.peek() === '' || this.peek() === '\n') this.fail('unterminated string', start - 1);
      this.i++;
    }
    this.i++;
    return this.text.slice(start, this.i - 1);
  }

  multiline(quote: '"""' | "'''"): string {
    const start = this.i;
    this.expect(quote);
    if (this.peek() === '\n') this.i++;
    else if (this.startsWith('\r\n')) this.i += 2;
    let out = '';
    for (;;) {
      if (this.i >= this.text.length) this.fail('unterminated string', start);
      if (this.startsWith(quote)) {
        // Up to two quotes may end the content, just before the closing three.
        let run = 3;
        while (this.text[this.i + run] === quote[0]) run++;
        if (run > 5) this.fail('too many quotes', this.i + 5);
        this.i += run;
        return out + quote[0]!.repeat(run - 3);
      }
      const c = this.peek();
      this.i++;
      if (quote === '"""' && c === '\\') {
        const rest = /^[ \t]*\r?\n/.exec(this.text.slice(this.i));
        if (rest) {
          this.i += rest[0].length;
          while (/[ \t\r\n]/.test(this.peek())) this.i++;
        } else out += this.escape();
      } else out += c;
    }
  }
}

function assign(
  table: { [key: string]: TomlValue },
  key: string[],
  value: TomlValue,
  twice: () => never,
): void {
  let at = table;
  for (const part of key.slice(0, -1)) {
    at[part] ??= {};
    const next = at[part];
    if (typeof next !== 'object' || Array.isArray(next) || next instanceof TomlScalar) twice();
    at = next as { [key: string]: TomlValue };
  }
  const last = key.at(-1)!;
  if (Object.hasOwn(at, last)) twice();
  at[last] = value;
}

/** Every table header and key/value statement of `text`, in order; throws where it cannot read. */
export function readToml(text: string): TomlDocument {
  const r = new Reader(text);
  const tables: TomlTable[] = [];
  const statements: TomlStatement[] = [];
  let table: string[] = [];
  if (r.peek() === '\ufeff') r.i++;
  while (r.i < text.length) {
    r.blank();
    if (r.i >= text.length) break;
    const start = r.i;
    if (r.peek() === '[') {
      const array = r.startsWith('[[');
      r.i += array ? 2 : 1;
      table = r.key();
      r.expect(array ? ']]' : ']');
      r.lineEnd();
      tables.push({ path: table, array, start });
      continue;
    }
    const key = r.key();
    r.expect('=');
    r.spaces();
    const valueStart = r.i;
    const value = r.value();
    const valueEnd = r.i;
    r.lineEnd();
    statements.push({ table, key, value, valueStart, valueEnd, start, end: r.i });
  }
  return { tables, statements };
}

/** A string as a TOML basic string. */
export function tomlString(value: string): string {
  return `"${value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) =>
    WRITTEN[c] !== undefined ? `\\${WRITTEN[c]}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )}"`;
}

/** A list of strings as a one-line TOML array. */
export function tomlStrings(values: readonly string[]): string {
  return `[${values.map(tomlString).join(', ')}]`;
}
