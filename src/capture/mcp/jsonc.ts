/**
 * JSON with comments (`//`, `/* *\/`) and trailing commas — what OpenCode reads its config as,
 * `opencode.json` included — read into a tree that keeps where each value is in the text, so that
 * one value can be replaced and every other byte (comments, spacing, order) left as it was. A key
 * given twice in one object is refused: readers disagree on which one wins.
 */
import { failAt } from './position.js';

export type JsoncNode =
  | { kind: 'object'; start: number; end: number; members: { key: string; value: JsoncNode }[] }
  | { kind: 'array'; start: number; end: number; items: JsoncNode[] }
  | { kind: 'scalar'; start: number; end: number; value: string | number | boolean | null };

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;
const STRING = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4}))*"/;

class Reader {
  i = 0;
  constructor(readonly text: string) {}

  fail(message: string, at = this.i): never {
    failAt(this.text, at, message);
  }

  blank(): void {
    for (;;) {
      while (/[ \t\r\n\ufeff]/.test(this.text[this.i] ?? '')) this.i++;
      if (this.text.startsWith('//', this.i)) {
        while (this.i < this.text.length && this.text[this.i] !== '\n') this.i++;
      } else if (this.text.startsWith('/*', this.i)) {
        const end = this.text.indexOf('*/', this.i + 2);
        if (end < 0) this.fail('unterminated comment');
        this.i = end + 2;
      } else return;
    }
  }

  value(): JsoncNode {
    this.blank();
    const start = this.i;
    const c = this.text[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return { kind: 'scalar', start, end: this.i, value: this.string() };
    const rest = this.text.slice(this.i, this.i + 64);
    const literal = /^(?:true|false|null)\b/.exec(rest)?.[0] ?? NUMBER.exec(rest)?.[0];
    if (literal === undefined) this.fail('expected a value');
    this.i += literal.length;
    return { kind: 'scalar', start, end: this.i, value: JSON.parse(literal) as number | boolean | null };
  }

  string(): string {
    const match = STRING.exec(this.text.slice(this.i));
    if (!match) this.fail('not a JSON string');
    this.i += match[0].length;
    return JSON.parse(match[0]) as string;
  }

  /** After an item: a comma (then maybe the close, a trailing comma) or the close. */
  next(close: string): boolean {
    this.blank();
    if (this.text[this.i] === ',') {
      this.i++;
      this.blank();
    } else if (this.text[this.i] !== close) this.fail(`expected ',' or '${close}'`);
    if (this.text[this.i] !== close) return true;
    this.i++;
    return false;
  }

  object(): JsoncNode {
    const start = this.i++;
    const members: { key: string; value: JsoncNode }[] = [];
    this.blank();
    if (this.text[this.i] === '}') this.i++;
    else
      do {
        this.blank();
        const at = this.i;
        if (this.text[this.i] !== '"') this.fail('expected a key');
        const key = this.string();
        if (members.some((m) => m.key === key)) this.fail(`the key "${key}" is given twice`, at);
        this.blank();
        if (this.text[this.i] !== ':') this.fail("expected ':'");
        this.i++;
        members.push({ key, value: this.value() });
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

export function readJsonc(text: string): JsoncNode {
  const reader = new Reader(text);
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
  return Object.fromEntries(node.members.map((m) => [m.key, plain(m.value)]));
}
