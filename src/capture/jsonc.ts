/**
 * An agent's JSON settings read into a tree that keeps where each value is in the text, so that
 * values can be replaced, added and removed and every other byte (comments, spacing, order) left
 * as it was (jsonc-edit.ts). Each agent's file is read as strictly as the agent reads it — its
 * dialect: plain JSON (Claude Code, Codex, Cursor), JSON with comments (Gemini CLI and Qwen Code
 * strip `//` and `/* *\/` comments, then parse JSON: no trailing commas), or JSONC with trailing
 * commas too (OpenCode). A key given twice in one object is refused: readers disagree on which one
 * wins.
 */
import { failAt } from './text-spans.js';

export type JsonDialect = 'json' | 'json-comments' | 'jsonc';

export interface JsoncMember {
  key: string;
  /** Where the key's opening quote is. */
  keyStart: number;
  value: JsoncNode;
}

export type JsoncNode =
  | { kind: 'object'; start: number; end: number; members: JsoncMember[] }
  | { kind: 'array'; start: number; end: number; items: JsoncNode[] }
  | { kind: 'scalar'; start: number; end: number; value: string | number | boolean | null };

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /(?:true|false|null)(?![A-Za-z0-9_$])/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4}))*"/y;

class Reader {
  i = 0;
  private readonly comments: boolean;
  private readonly trailingCommas: boolean;
  constructor(
    readonly text: string,
    dialect: JsonDialect,
  ) {
    this.comments = dialect !== 'json';
    this.trailingCommas = dialect === 'jsonc';
    // OpenCode's reader, like most JSONC readers, takes a byte-order mark as blank.
    if (dialect === 'jsonc' && text.charCodeAt(0) === 0xfeff) this.i = 1;
  }

  fail(message: string, at = this.i): never {
    failAt(this.text, at, message);
  }

  blank(): void {
    for (;;) {
      while (/[ \t\r\n]/.test(this.text[this.i] ?? '')) this.i++;
      if (this.text.startsWith('//', this.i) || this.text.startsWith('/*', this.i)) {
        if (!this.comments) this.fail('comments are not JSON, and this agent reads its file as JSON');
        if (this.text[this.i + 1] === '/') {
          while (this.i < this.text.length && this.text[this.i] !== '\n') this.i++;
        } else {
          const end = this.text.indexOf('*/', this.i + 2);
          if (end < 0) this.fail('unterminated comment');
          this.i = end + 2;
        }
      } else return;
    }
  }

  private match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.i;
    return pattern.exec(this.text)?.[0];
  }

  value(): JsoncNode {
    this.blank();
    const start = this.i;
    const c = this.text[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') {
      const value = this.string();
      return { kind: 'scalar', start, end: this.i, value };
    }
    const literal = this.match(LITERAL) ?? this.match(NUMBER);
    if (literal === undefined) this.fail('expected a value');
    this.i += literal.length;
    return { kind: 'scalar', start, end: this.i, value: JSON.parse(literal) as number | boolean | null };
  }

  string(): string {
    const match = this.match(STRING);
    if (match === undefined) this.fail('not a JSON string');
    this.i += match.length;
    return JSON.parse(match) as string;
  }

  /** After an item: a comma (then maybe the close, a trailing comma) or the close. */
  next(close: string): boolean {
    this.blank();
    if (this.text[this.i] === ',') {
      const comma = this.i++;
      this.blank();
      if (this.text[this.i] === close && !this.trailingCommas)
        this.fail(`a comma before '${close}' is not JSON, and this agent does not read one`, comma);
    } else if (this.text[this.i] !== close) this.fail(`expected ',' or '${close}'`);
    if (this.text[this.i] !== close) return true;
    this.i++;
    return false;
  }

  object(): JsoncNode {
    const start = this.i++;
    const members: JsoncMember[] = [];
    this.blank();
    if (this.text[this.i] === '}') this.i++;
    else
      do {
        this.blank();
        const keyStart = this.i;
        if (this.text[this.i] !== '"') this.fail('expected a key');
        const key = this.string();
        if (members.some((m) => m.key === key)) this.fail(`the key "${key}" is given twice`, keyStart);
        this.blank();
        if (this.text[this.i] !== ':') this.fail("expected ':'");
        this.i++;
        members.push({ key, keyStart, value: this.value() });
      } while (this.next('}'));
    return { kind: 'object', start, end: this.i, members };
  }

  array(): JsoncNode {
    const start = this.i++;
    const items: JsoncNode[] = [];
    this.blank();
    if (this.text[this.i] === ']') this.i++;
    else
      do items.push(this.value());
      while (this.next(']'));
    return { kind: 'array', start, end: this.i, items };
  }
}

/** The whole text as one value; a refusal names the line and column at fault. */
export function readJsonc(text: string, dialect: JsonDialect = 'jsonc'): JsoncNode {
  const reader = new Reader(text, dialect);
  const root = reader.value();
  reader.blank();
  if (reader.i < text.length) reader.fail('unexpected text after the value');
  return root;
}

/** A member of an object node, if it has one. */
export function member(node: JsoncNode | undefined, key: string): JsoncNode | undefined {
  return node?.kind === 'object' ? node.members.find((m) => m.key === key)?.value : undefined;
}

/** The plain value of a node. */
export function plain(node: JsoncNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'array') return node.items.map(plain);
  const out: Record<string, unknown> = {};
  // defineProperty keeps a "__proto__" key an ordinary member.
  for (const m of node.members)
    Object.defineProperty(out, m.key, {
      value: plain(m.value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}
