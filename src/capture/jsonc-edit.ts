/**
 * Editing a JSON settings text in place toward a new value: members and items that stay keep their
 * bytes (comments, spacing, key order), a changed scalar is replaced, a removed entry goes with its
 * comma, its line and the comments on that line, and a new entry is written in the layout of its
 * neighbours (their indentation, the file's line ends; on one line when they are). An entry added
 * at the end and then removed leaves the text as it was, so an install and an uninstall give the
 * user's file back byte for byte. Objects are compared by key, arrays by their longest common run
 * of equal items (what is left between two equal items is edited pairwise, the rest added or
 * removed). The result is read back and must hold exactly the value asked for.
 */
import { isDeepStrictEqual as same } from 'node:util';
import { isJsonObject } from '../core/json.js';
import { type JsoncNode, type JsonDialect, plain, readJsonc } from './jsonc.js';
import { type Span, splice } from './text-spans.js';
import { CaptureError } from './types.js';

/** The file's own line end and indentation step. */
interface Style {
  eol: string;
  unit: string;
}

/** One member or item of a container: where it starts (its key, for a member) and its value. */
interface Entry {
  start: number;
  node: JsoncNode;
}

/** New entries (members with their key, items without), to go before entry `at`. */
interface Added {
  at: number;
  values: { key?: string; value: unknown }[];
}

export function editJsonc(text: string, root: JsoncNode, value: unknown, dialect: JsonDialect): string {
  const firstIndent = /\n([ \t]+)\S/.exec(text)?.[1];
  const style: Style = {
    eol: text.includes('\r\n') ? '\r\n' : '\n',
    unit: firstIndent?.startsWith('\t') ? '\t' : (firstIndent ?? '  '),
  };
  const edits: Span[] = [];
  new Editor(text, style, edits).node(root, value);
  const out = splice(text, edits);
  if (!same(plain(readJsonc(out, dialect)), value))
    throw new CaptureError('bad-payload', 'the settings could not be edited in place; nothing was changed');
  return out;
}

class Editor {
  constructor(
    private readonly text: string,
    private readonly style: Style,
    private readonly edits: Span[],
  ) {}

  node(node: JsoncNode, value: unknown): void {
    if (same(plain(node), value)) return;
    if (node.kind === 'object' && isJsonObject(value)) this.object(node, value);
    else if (node.kind === 'array' && Array.isArray(value)) this.array(node, value);
    else
      this.edits.push({
        start: node.start,
        end: node.end,
        text: this.serialize(value, this.indentOf(node.start)),
      });
  }

  private object(node: Extract<JsoncNode, { kind: 'object' }>, value: Record<string, unknown>): void {
    const entries = node.members.map((m) => ({ start: m.keyStart, node: m.value }));
    const kept = node.members.map((m) => Object.hasOwn(value, m.key));
    node.members.forEach((m, i) => {
      if (kept[i]) this.node(m.value, value[m.key]);
    });
    const present = new Set(node.members.map((m) => m.key));
    const added = Object.keys(value)
      .filter((k) => !present.has(k))
      .map((k) => ({ key: k, value: value[k] }));
    this.container(node, entries, kept, [], added);
  }

  private array(node: Extract<JsoncNode, { kind: 'array' }>, value: unknown[]): void {
    const old = node.items.map(plain);
    const entries = node.items.map((item) => ({ start: item.start, node: item }));
    const kept = entries.map(() => false);
    const before: Added[] = [];
    let atEnd: Added['values'] = [];
    let i = 0;
    let j = 0;
    // Between two equal items, the old and new ones are edited pairwise; old ones left over are
    // removed, new ones added before the next equal item (or at the end).
    for (const [oi, ni] of [...commonRun(old, value), [old.length, value.length] as const]) {
      for (; i < oi && j < ni; i++, j++) {
        kept[i] = true;
        this.node(node.items[i]!, value[j]);
      }
      const fresh = value.slice(j, ni).map((v) => ({ value: v }));
      if (oi === old.length) atEnd = fresh;
      else {
        if (fresh.length > 0) before.push({ at: oi, values: fresh });
        kept[oi] = true;
      }
      i = oi + 1;
      j = ni + 1;
    }
    this.container(node, entries, kept, before, atEnd);
  }

  /** Removes the entries not kept and adds the new ones: before entry `at`, or at the end. */
  private container(
    node: JsoncNode,
    entries: Entry[],
    kept: boolean[],
    before: Added[],
    atEnd: Added['values'],
  ): void {
    const lastKept = kept.lastIndexOf(true);
    for (let a = 0; a < entries.length; a++) {
      if (kept[a]) continue;
      let b = a;
      while (b + 1 < entries.length && !kept[b + 1]) b++;
      this.removeRun(node, entries, a, b, lastKept, atEnd);
      a = b;
    }
    for (const { at, values } of before) {
      const next = entries[at]!;
      const lines = this.atLineStart(next.start);
      const texts = values.map((v) => this.entryText(v, lines ? this.indentOf(next.start) : undefined));
      const where = this.lineStart(next.start);
      this.insert(
        where,
        lines
          ? texts.map((e) => `${this.style.eol}${this.indentOf(next.start)}${e},`).join('')
          : texts.map((e) => `${e}, `).join(''),
      );
    }
    if (atEnd.length === 0) return;
    if (entries.length === 0) this.intoEmpty(node, atEnd);
    // (A removed run at the end was replaced by the new entries: removeRun.)
    else if (lastKept === entries.length - 1) this.append(entries[lastKept]!, atEnd);
  }

  /**
   * Removes entries a..b. A run followed by a kept entry goes with its commas and lines; a run at
   * the end takes the comma before it (unless it has its own trailing comma), or, when entries are
   * added at the end, is replaced by them.
   */
  private removeRun(
    node: JsoncNode,
    entries: Entry[],
    a: number,
    b: number,
    lastKept: number,
    atEnd: Added['values'],
  ): void {
    const first = entries[a]!;
    const last = entries[b]!;
    const own = this.commaAfter(last.node.end);
    const whole = { start: this.lineStart(first.start), end: this.extentEnd(last.node.end), text: '' };
    if (b < lastKept) this.edits.push(whole);
    else if (atEnd.length > 0)
      this.edits.push({
        start: first.start,
        end: own === undefined ? last.node.end : own + 1,
        text:
          this.joined(atEnd, this.indentOf(first.start), this.atLineStart(first.start)) +
          (own === undefined ? '' : ','),
      });
    else if (lastKept < 0) {
      // Nothing is left: an inside that held nothing but the entries becomes empty.
      const rest = this.text.slice(node.start + 1, first.start) + this.text.slice(whole.end, node.end - 1);
      this.edits.push(/^\s*$/.test(rest) ? { start: node.start + 1, end: node.end - 1, text: '' } : whole);
    } else if (own !== undefined) this.edits.push(whole);
    else {
      // The comma before the run goes: on its line when the run starts lines, else with the run.
      const comma = this.commaAfter(entries[lastKept]!.node.end)!;
      if (this.atLineStart(first.start)) this.edits.push({ start: comma, end: comma + 1, text: '' }, whole);
      else this.edits.push({ start: comma, end: whole.end, text: '' });
    }
  }

  /** New entries after the last one, in its layout: on lines of their own when it has one. */
  private append(last: Entry, added: Added['values']): void {
    const comma = this.commaAfter(last.node.end);
    const end = this.extentEnd(last.node.end);
    const lines = this.atLineStart(last.start) && /^[\r\n]/.test(this.text.slice(end, end + 1));
    const indent = this.indentOf(last.start);
    const text = `${this.style.eol}${indent}${this.joined(added, indent, true)}`;
    if (!lines) {
      const at = comma === undefined ? last.node.end : comma + 1;
      this.insert(at, `${comma === undefined ? ',' : ''} ${this.joined(added, indent, false)}`);
    }
    // A trailing comma stays the last entry's; else a comma goes right after the value.
    else if (comma !== undefined) this.insert(end, `${text},`);
    else if (end === last.node.end) this.insert(end, `,${text}`);
    else {
      this.insert(last.node.end, ',');
      this.insert(end, text);
    }
  }

  /** New entries into an empty container: one a line, one step in from the container's line. */
  private intoEmpty(node: JsoncNode, added: { key?: string; value: unknown }[]): void {
    const outer = this.lineIndent(node.start);
    const inner = outer + this.style.unit;
    const eol = this.style.eol;
    const text = `${eol}${inner}${this.joined(added, inner, true)}`;
    // Blanks inside are replaced; comments stay, and the new entries follow the last of them.
    const inside = this.text.slice(node.start + 1, node.end - 1);
    if (/^\s*$/.test(inside))
      this.edits.push({ start: node.start + 1, end: node.end - 1, text: `${text}${eol}${outer}` });
    else this.insert(node.start + 1 + inside.trimEnd().length, text);
  }

  private insert(at: number, text: string): void {
    this.edits.push({ start: at, end: at, text });
  }

  /** Entries written at `indent`, one a line; or all on one line, each on one. */
  private joined(values: Added['values'], indent: string, lines: boolean): string {
    const parts = values.map((v) => this.entryText(v, lines ? indent : undefined));
    return parts.join(lines ? `,${this.style.eol}${indent}` : ', ');
  }

  /** An entry at `indent`, or on one line when there is none. */
  private entryText(entry: Added['values'][number], indent: string | undefined): string {
    const value = indent === undefined ? JSON.stringify(entry.value) : this.serialize(entry.value, indent);
    return entry.key === undefined ? value : `${JSON.stringify(entry.key)}: ${value}`;
  }

  /** A value written at `indent`, in the file's indentation step and line ends. */
  private serialize(value: unknown, indent: string): string {
    return JSON.stringify(value, null, this.style.unit).split('\n').join(`${this.style.eol}${indent}`);
  }

  /** Only blanks between the line's start and `at`. */
  private atLineStart(at: number): boolean {
    const from = this.text.lastIndexOf('\n', at - 1) + 1;
    return /^[ \t]*$/.test(this.text.slice(from, at));
  }

  /** Where an entry's line begins: its line break, when the entry starts the line; else itself. */
  private lineStart(at: number): number {
    if (!this.atLineStart(at)) return at;
    const nl = this.text.lastIndexOf('\n', at - 1);
    return nl > 0 && this.text[nl - 1] === '\r' ? nl - 1 : nl;
  }

  /** The blanks before `at` on its line (for an entry that starts one). */
  private indentOf(at: number): string {
    return this.atLineStart(at)
      ? this.text.slice(this.text.lastIndexOf('\n', at - 1) + 1, at)
      : this.lineIndent(at);
  }

  private lineIndent(at: number): string {
    const from = this.text.lastIndexOf('\n', at - 1) + 1;
    return /^[ \t]*/.exec(this.text.slice(from))![0];
  }

  /** Past blanks and comments on the same line. */
  private skipInline(at: number): number {
    const t = this.text;
    let i = at;
    for (;;) {
      while (t[i] === ' ' || t[i] === '\t') i++;
      if (t.startsWith('//', i)) {
        while (i < t.length && t[i] !== '\n' && t[i] !== '\r') i++;
      } else if (t.startsWith('/*', i)) {
        const close = t.indexOf('*/', i + 2);
        if (close < 0 || /[\r\n]/.test(t.slice(i, close))) return i;
        i = close + 2;
      } else return i;
    }
  }

  /** The comma after a value, past blanks and comments; undefined when the container closes first. */
  private commaAfter(end: number): number | undefined {
    const t = this.text;
    let i = end;
    for (;;) {
      i = this.skipInline(i);
      if (t[i] === '\r' || t[i] === '\n') i++;
      else break;
    }
    return t[i] === ',' ? i : undefined;
  }

  /**
   * Where an entry's text ends: after its comma on the same line, and the comments after it up to
   * the line end; or, when another entry follows on the line, after the blanks before it.
   */
  private extentEnd(valueEnd: number): number {
    const t = this.text;
    let i = this.skipInline(valueEnd);
    const comma = t[i] === ',' ? i : undefined;
    if (comma !== undefined) i = this.skipInline(i + 1);
    if (i >= t.length || t[i] === '\r' || t[i] === '\n') return i;
    if (comma === undefined) return valueEnd;
    let k = comma + 1;
    while (t[k] === ' ' || t[k] === '\t') k++;
    return k;
  }
}

/** The pairs of indexes of a longest run of equal items common to both lists, in order. */
function commonRun(a: unknown[], b: unknown[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const equal = (i: number, j: number) => same(a[i], b[j]);
  const table: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      table[i]![j] = equal(i, j) ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (equal(i, j)) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (table[i + 1]![j]! >= table[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}
