/**
 * The part of RFC 8941 (Structured Field Values for HTTP) that HTTP Message Signatures and
 * Content-Digest use: dictionaries whose members are items or inner lists, with parameters; bare
 * items integer, string, token, byte sequence and boolean. Parsing is strict (§4.2): anything else
 * fails, and the caller ignores the whole field.
 */
import { TallyError } from './errors.js';

export class StructuredFieldError extends TallyError<'syntax'> {}

export type BareItem =
  | { type: 'integer'; value: number }
  | { type: 'string'; value: string }
  | { type: 'token'; value: string }
  | { type: 'bytes'; value: Buffer }
  | { type: 'boolean'; value: boolean };

export type Parameters = [string, BareItem][];

export interface Item {
  kind: 'item';
  value: BareItem;
  params: Parameters;
}

export interface InnerList {
  kind: 'list';
  items: Item[];
  params: Parameters;
}

export type Member = Item | InnerList;

class Reader {
  at = 0;
  constructor(readonly text: string) {}
  peek(): string {
    return this.text[this.at] ?? '';
  }
  fail(what: string): never {
    throw new StructuredFieldError('syntax', `structured field: ${what} at ${this.at}`);
  }
  spaces(): void {
    while (this.peek() === ' ') this.at++;
  }
  ows(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.at++;
  }
  done(): boolean {
    return this.at >= this.text.length;
  }
}

function key(r: Reader): string {
  if (!/[a-z*]/.test(r.peek())) r.fail('expected a key');
  const start = r.at;
  while (/[a-z0-9_\-.*]/.test(r.peek())) r.at++;
  return r.text.slice(start, r.at);
}

function bareItem(r: Reader): BareItem {
  const c = r.peek();
  if (c === '"') {
    r.at++;
    let out = '';
    for (;;) {
      const ch = r.peek();
      if (ch === '') r.fail('unterminated string');
      r.at++;
      if (ch === '"') return { type: 'string', value: out };
      if (ch === '\\') {
        const next = r.peek();
        if (next !== '"' && next !== '\\') r.fail('bad escape');
        out += next;
        r.at++;
      } else {
        const code = ch.charCodeAt(0);
        if (code < 0x20 || code > 0x7e) r.fail('non-ASCII character in a string');
        out += ch;
      }
    }
  }
  if (c === ':') {
    r.at++;
    const start = r.at;
    while (r.peek() !== ':' && r.peek() !== '') r.at++;
    if (r.peek() !== ':') r.fail('unterminated byte sequence');
    const b64 = r.text.slice(start, r.at);
    r.at++;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) r.fail('bad base64 in a byte sequence');
    return { type: 'bytes', value: Buffer.from(b64, 'base64') };
  }
  if (c === '?') {
    r.at++;
    const v = r.peek();
    if (v !== '0' && v !== '1') r.fail('bad boolean');
    r.at++;
    return { type: 'boolean', value: v === '1' };
  }
  if (c === '-' || /[0-9]/.test(c)) {
    const match = /^-?[0-9]{1,15}(?![0-9.])/.exec(r.text.slice(r.at));
    if (!match) r.fail('unsupported number (only integers of up to 15 digits)');
    r.at += match[0].length;
    return { type: 'integer', value: Number(match[0]) };
  }
  if (/[A-Za-z*]/.test(c)) {
    const start = r.at;
    while (/[A-Za-z0-9!#$%&'*+\-.^_`|~:/]/.test(r.peek())) r.at++;
    return { type: 'token', value: r.text.slice(start, r.at) };
  }
  return r.fail('expected an item');
}

function parameters(r: Reader): Parameters {
  const params: Parameters = [];
  while (r.peek() === ';') {
    r.at++;
    r.spaces();
    const name = key(r);
    let value: BareItem = { type: 'boolean', value: true };
    if (r.peek() === '=') {
      r.at++;
      value = bareItem(r);
    }
    const existing = params.findIndex(([n]) => n === name);
    if (existing >= 0) params[existing] = [name, value];
    else params.push([name, value]);
  }
  return params;
}

function member(r: Reader): Member {
  if (r.peek() !== '(') return { kind: 'item', value: bareItem(r), params: parameters(r) };
  r.at++;
  const items: Item[] = [];
  for (;;) {
    r.spaces();
    if (r.peek() === ')') {
      r.at++;
      return { kind: 'list', items, params: parameters(r) };
    }
    items.push({ kind: 'item', value: bareItem(r), params: parameters(r) });
    if (r.peek() !== ' ' && r.peek() !== ')') r.fail('expected a space or ) in an inner list');
  }
}

/** An RFC 8941 dictionary, members in order (a repeated key keeps its last value, in first place). */
export function parseDictionary(text: string): Map<string, Member> {
  const r = new Reader(text);
  const out = new Map<string, Member>();
  r.spaces();
  if (r.done()) return out;
  for (;;) {
    const name = key(r);
    let value: Member;
    if (r.peek() === '=') {
      r.at++;
      value = member(r);
    } else value = { kind: 'item', value: { type: 'boolean', value: true }, params: parameters(r) };
    out.set(name, value);
    r.ows();
    if (r.done()) return out;
    if (r.peek() !== ',') r.fail('expected a comma');
    r.at++;
    r.ows();
    if (r.done()) r.fail('trailing comma');
  }
}

export function serializeBareItem(item: BareItem): string {
  switch (item.type) {
    case 'integer':
      return String(item.value);
    case 'string':
      if (!/^[\x20-\x7e]*$/.test(item.value))
        throw new StructuredFieldError('syntax', 'a structured string holds printable ASCII only');
      return `"${item.value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
    case 'token':
      return item.value;
    case 'bytes':
      return `:${item.value.toString('base64')}:`;
    case 'boolean':
      return item.value ? '?1' : '?0';
  }
}

export function serializeParameters(params: Parameters): string {
  return params
    .map(([name, value]) =>
      value.type === 'boolean' && value.value ? `;${name}` : `;${name}=${serializeBareItem(value)}`,
    )
    .join('');
}

export function serializeInnerList(list: InnerList): string {
  const items = list.items.map((i) => `${serializeBareItem(i.value)}${serializeParameters(i.params)}`);
  return `(${items.join(' ')})${serializeParameters(list.params)}`;
}
