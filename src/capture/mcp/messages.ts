/**
 * The JSON-RPC pieces both gateways (stdio and HTTP) read and write: ids as map keys, which client
 * lines must be read at all, the reading of a `tools/call` request, protocol errors, and the tool
 * result a denied call gets.
 */
import { READ_ARGUMENTS, toolKindHint } from '../../boundary/tool-kind.js';
import { parseJson } from '../../core/canonical.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { qualifiedName } from './events.js';

/** The map key of a JSON-RPC id; undefined for anything that is not a valid id. */
export function idKey(id: unknown): string | undefined {
  if (typeof id === 'string') return `s${id}`;
  if (typeof id === 'number' && Number.isFinite(id)) return `n${id}`;
  return undefined;
}

/** The client methods the gateway acts on: it judges calls, learns tools, records cancellations. */
const FOLLOWED = ['tools/call', 'tools/list', 'notifications/cancelled'].map((m) => Buffer.from(m));

const isBlank = (b: number | undefined) => b === 0x20 || b === 0x09;

/**
 * Whether a client line must be parsed before it is forwarded. Only a line from which no JSON
 * parser, however lax, could read a request passes unread: printable ASCII (a lax decoder's
 * overlong UTF-8 could spell any character), no backslash (nor could an escape), one object or
 * array from brace to brace (so a parser that ignores newlines cannot join it to the next line into
 * one), none of the followed method names in its bytes, and no `method` in any case (a request's
 * id is followed while it waits: JSON-RPC's ids in flight are unique, and an answer is matched to
 * its request by id). What passes is the client's answers to the server's requests. A blank line
 * passes too.
 */
export function needsReading(bytes: Buffer): boolean {
  let start = 0;
  let end = bytes.length;
  if (bytes[end - 1] === 0x0d) end -= 1;
  while (start < end && isBlank(bytes[start])) start += 1;
  while (end > start && isBlank(bytes[end - 1])) end -= 1;
  if (start === end) return false;
  const first = bytes[start];
  const last = bytes[end - 1];
  if (!((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d))) return true;
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (b < 0x20 ? b !== 0x09 : b > 0x7e || b === 0x5c) return true;
  }
  for (const name of FOLLOWED) if (bytes.includes(name)) return true;
  return METHOD.test(bytes.toString('latin1', start, end));
}

/** `method` as a reader that ignores case finds it (the line is ASCII here: no other spelling). */
const METHOD = /method/i;

const FOLLOWED_NAMES: ReadonlySet<string> = new Set(FOLLOWED.map((m) => m.toString()));

/**
 * For a line the strict parser refused only for a value it will not hold exactly (an integer past
 * 2^53, an escaped lone surrogate; `code` is its reason): its messages when it is still a line the
 * gateway does not act on, else undefined. Such a line is forwarded unchanged — it may be a
 * client's answer to a server's request. One that names a followed method, anywhere in its bytes or
 * as any parser reads it, is refused, and so is every other refusal: the line is read again with
 * only those two values let through, so a key given twice (parsers differ on which one wins) or two
 * keys a case-insensitive reader takes for one are refused wherever they stand, after the inexact
 * value too.
 */
export function unjudgedMessages(bytes: Buffer, code: string | undefined): JsonObject[] | undefined {
  if (code !== 'unsafe-integer' && code !== 'lone-surrogate') return undefined;
  if (FOLLOWED.some((name) => bytes.includes(name))) return undefined;
  let value: unknown;
  try {
    value = parseJson(bytes, { inexact: true });
  } catch {
    return undefined;
  }
  if (ambiguousKeys(value) !== undefined) return undefined;
  const messages = Array.isArray(value) ? value : [value];
  const unjudged = messages.every(
    (m) =>
      isJsonObject(m) &&
      (m.method === undefined || (typeof m.method === 'string' && !FOLLOWED_NAMES.has(m.method))),
  );
  return unjudged ? (messages as JsonObject[]) : undefined;
}

/**
 * A key as a reader that ignores case matches it. Go's encoding/json (which Go MCP servers decode
 * requests with) takes `Method`, `METHOD` and `ſ` for `s` as the field `method`; upper then lower
 * case puts every such spelling on one string, and a few more (`ß` and `ss`), which only makes the
 * check stricter.
 */
const folded = (key: string): string => key.toUpperCase().toLowerCase();

/** No upper-case letter and nothing outside ASCII: the key folds to itself. */
const PLAIN_KEY = /^[\x00-\x40\x5b-\x7f]*$/;

/** The members the gateway reads by name, of a message and of its `params`. */
const ENVELOPE = ['jsonrpc', 'id', 'method', 'params', 'result', 'error'];
const PARAMS = ['name', 'arguments', '_meta', 'requestId'];

/** Two keys of one object that a case-insensitive reader takes for one, or a spelling of a read name. */
function clash(object: JsonObject, names: readonly string[]): string | undefined {
  const keys = Object.keys(object);
  if (keys.every((k) => PLAIN_KEY.test(k)) && names.every((n) => PLAIN_KEY.test(n))) return undefined;
  const seen = new Map<string, string>();
  for (const name of names) seen.set(folded(name), name);
  for (const key of keys) {
    const fold = folded(key);
    const other = seen.get(fold);
    if (other !== undefined && other !== key) return `${JSON.stringify(other)} and ${JSON.stringify(key)}`;
    if (other === undefined) seen.set(fold, key);
  }
  return undefined;
}

/**
 * Where a message read as valid JSON is still read otherwise by a reader that matches keys without
 * regard to case: two keys of one object, anywhere in it, that are the same but for case (`path`
 * and `PATH`), or a key of the message or of its `params` spelled in another case than a member
 * the gateway reads (`Method`, `Arguments`). Go's encoding/json reads `{"method":"ping",
 * "Method":"tools/call"}` as a call and `{"arguments":{…},"Arguments":{…}}` as the second
 * arguments. Such a message is refused, never forwarded. Undefined when there is none.
 */
export function ambiguousKeys(message: unknown): string | undefined {
  const messages = Array.isArray(message) ? message : [message];
  for (const m of messages) {
    if (!isJsonObject(m)) continue;
    const found =
      clash(m, ENVELOPE) ?? (isJsonObject(m.params) ? clash(m.params, PARAMS) : undefined) ?? nestedClash(m);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The first pair of keys the same but for case, in any object inside `value`. */
function nestedClash(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (Array.isArray(next)) stack.push(...next);
    else if (isJsonObject(next)) {
      const found = clash(next, []);
      if (found !== undefined) return found;
      stack.push(...Object.values(next));
    }
  }
  return undefined;
}

/** The protocol error for a message `ambiguousKeys` found. */
export function ambiguousMessage(keys: string): string {
  return `invalid request: keys ${keys} are one key to a reader that ignores case (Go's encoding/json); the gateway does not forward it`;
}

/** The UTF-8 line separators some servers' line readers split at (Python's `str.splitlines`). */
const SEPARATORS: readonly [Buffer, Buffer][] = [
  [Buffer.from('\u0085'), Buffer.from('\\u0085')],
  [Buffer.from('\u2028'), Buffer.from('\\u2028')],
  [Buffer.from('\u2029'), Buffer.from('\\u2029')],
];
const SPACE = Buffer.from(' ');

/**
 * A JSON text that a conforming parser accepted, written so that no line reader splits it: each CR
 * or LF (in valid JSON only ever whitespace between tokens: inside a string they must be escaped)
 * becomes a space, and each NEL, LINE SEPARATOR or PARAGRAPH SEPARATOR (legal only raw inside a
 * string) becomes its `\u` escape. The value is the same to every parser; the text is one line to
 * LF readers, to CR-or-LF readers (Python's universal newlines, Node's readline) and to readers
 * that split on Unicode line ends (`str.splitlines`). Its other line ends (VT, FF, FS, GS, RS) are
 * control characters no valid JSON holds raw. Returns `json` itself when nothing needed writing.
 */
export function singleLine(json: Buffer): Buffer {
  const hasBreak = json.indexOf(0x0d) >= 0 || json.indexOf(0x0a) >= 0;
  if (!hasBreak && !SEPARATORS.some(([raw]) => json.includes(raw))) return json;
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < json.length; i++) {
    const b = json[i]!;
    let raw = 1;
    let written: Buffer | undefined;
    if (b === 0x0d || b === 0x0a) written = SPACE;
    else if (b === 0xc2 || b === 0xe2) {
      const found = SEPARATORS.find(([r]) => json.subarray(i, i + r.length).equals(r));
      if (found) [raw, written] = [found[0].length, found[1]];
    }
    if (written === undefined) continue;
    parts.push(json.subarray(from, i), written);
    from = i + raw;
    i += raw - 1;
  }
  parts.push(json.subarray(from));
  return Buffer.concat(parts);
}

/**
 * A client line as the gateway forwards it once read: its JSON in single-line form, then the line
 * end it came with (LF, CRLF, or none at the end of input). The same bytes when nothing changed.
 */
export function forwardedLine(line: Buffer, raw: Buffer): Buffer {
  const content = line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
  const single = singleLine(content);
  return single === content ? raw : Buffer.concat([single, raw.subarray(content.length)]);
}

/** A message the gateway writes itself, as one line (`JSON.stringify` leaves U+2028 raw). */
export function line(value: unknown): Buffer {
  return Buffer.concat([singleLine(Buffer.from(JSON.stringify(value))), Buffer.from('\n')]);
}

/** A JSON-RPC error response (protocol errors: malformed requests). */
export function protocolError(id: unknown, code: number, message: string): Buffer {
  return line({ jsonrpc: '2.0', id: idKey(id) === undefined ? null : id, error: { code, message } });
}

/** The policy's argument names by their case-folded spelling. */
const READ_FOLDED = new Map([...READ_ARGUMENTS].map((name) => [folded(name), name]));

/**
 * An argument spelled, but for case, as a name the policy reads a call by (`PATH`, `File_Path`,
 * `ſcript`): a server that matches keys without regard to case — Go's encoding/json binding a
 * tool's typed input — reads it as that name, and the policy does not read it at all. So
 * `{"PATH": "secret/key"}` would write where `Write(secret/**)` forbids. Undefined when there is
 * none, or when the tool's schema (learned from `tools/list`) declares the key as written.
 */
function caseVariantArgument(
  input: JsonObject,
  declared: ReadonlySet<string> | undefined,
): string | undefined {
  for (const key of Object.keys(input)) {
    if (READ_ARGUMENTS.has(key) || declared?.has(key)) continue;
    const read = READ_FOLDED.get(folded(key));
    if (read !== undefined)
      return `invalid params: argument ${JSON.stringify(key)} is ${JSON.stringify(read)} to a server that matches keys without regard to case (Go's encoding/json), and the policy reads only ${JSON.stringify(read)}: spell it so`;
  }
  return undefined;
}

/** What a `tools/list` answer told of one tool: the kind its name and schema suggest, the arguments it declares. */
export interface LearnedTool {
  kind: string | undefined;
  declared: Set<string>;
}

/** The tools of a `tools/list` answer of `server`, each by its name into `learned`. */
export function learnTools(
  server: string,
  tools: readonly unknown[],
  learned: Map<string, LearnedTool>,
): void {
  for (const tool of tools) {
    if (!isJsonObject(tool) || typeof tool.name !== 'string') continue;
    const properties = isJsonObject(tool.inputSchema) ? tool.inputSchema.properties : undefined;
    learned.set(tool.name, {
      kind: toolKindHint(qualifiedName(server, tool.name), tool.inputSchema),
      declared: new Set(isJsonObject(properties) ? Object.keys(properties) : []),
    });
  }
}

/**
 * A `tools/call` request's tool and arguments, or the protocol error a malformed one gets.
 * `learned`: the tools as far as `tools/list` told (the argument names each declares).
 */
export function readCall(
  message: JsonObject,
  learned?: ReadonlyMap<string, LearnedTool>,
): { toolName: string; input: JsonObject } | { error: [code: number, message: string] } {
  if (idKey(message.id) === undefined)
    return { error: [-32600, 'invalid request: id must be a string or a number'] };
  const params = message.params;
  if (!isJsonObject(params) || typeof params.name !== 'string' || params.name === '')
    return { error: [-32602, 'invalid params: tools/call needs params.name, a non-empty string'] };
  if (params.arguments !== undefined && !isJsonObject(params.arguments))
    return { error: [-32602, 'invalid params: params.arguments must be an object'] };
  const input = params.arguments ?? {};
  const variant = caseVariantArgument(input, learned?.get(params.name)?.declared);
  if (variant !== undefined) return { error: [-32602, variant] };
  return { toolName: params.name, input };
}

/**
 * The protocol error for a request whose id another request still waiting for its answer holds:
 * JSON-RPC gives ids in flight to one request each, and the gateway matches an answer to its
 * request by id, so it would take one's answer for the other's.
 */
export function idInUse(id: unknown): Buffer {
  return protocolError(id, -32600, idInUseText(id));
}

export function idInUseText(id: unknown): string {
  return `invalid request: id ${JSON.stringify(id)} is in use by a request not yet answered; the gateway does not forward it`;
}

/** The answer to a denied call: a tool result the model reads, not a protocol error. */
export function deniedResult(id: unknown, reason: string): Buffer {
  return line({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: reason }], isError: true } });
}

/**
 * A `tools/call` sent as a notification (no id) could not be told of a denial, so it is never
 * forwarded: a server that ran it would run a call no one judged.
 */
export const UNANSWERABLE_CALL =
  'invalid request: a tools/call must carry an id (as a notification it could not be answered, so the gateway does not forward it)';

/** A `tools/call` request: the one message the gateway holds and judges. */
export const isCall = (m: unknown): m is JsonObject =>
  isJsonObject(m) && m.method === 'tools/call' && 'id' in m;

/** A `tools/call` without an id: never forwarded (UNANSWERABLE_CALL). */
export const isUnanswerableCall = (m: unknown): boolean =>
  isJsonObject(m) && m.method === 'tools/call' && !('id' in m);
