/**
 * Content selection (AHP-CONTENT-002): before an event leaves the process for one subscription,
 * every content part in it is cut down to what that subscription's `content` selection allows.
 *
 * A content part is any object with `kind` 'text' | 'attachment', a string `mediaType` and a
 * string `selection`, wherever it sits in the event (items, deltas, summaries, file changes, …), so
 * a duplicate copy of content in another slot cannot bypass the selection. Dispositions:
 * - body: the part is sent as it is.
 * - metadata: the part keeps id, kind, mediaType, category and any size/sha256, loses its text or
 *   body (a text body gains `size` and `sha256` of its UTF-8 bytes).
 * - omit: the part is removed from the list that holds it (a part held directly by a field, not a
 *   list, becomes an omit stub without text).
 * A part never gains disclosure: one already at metadata stays metadata under a body selection.
 * `native` is removed unless the subscription sets `includeNative`, at every depth: the event's own
 * `native` and any nested one (the schemas also place it in `error.native` of tool.after, turn.end
 * and model.error). Tool input is the tool's own arguments, not event structure, so a `native` key
 * inside a `tool.input` (the event's or a batch call's) is an argument and kept. The input is
 * never mutated.
 * The result is built for sending and shares what it keeps unchanged: any list or object with
 * nothing withheld inside it (parts, tool input, `native`, `extensions`, `params` included) is the
 * input's own, and an event with nothing to withhold is returned as it is. Treat both as read-only
 * while the result is in use.
 */

import { sha256Hex } from '../../core/hash.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import type { ContentDisposition, ContentSelection } from '../registration/types.js';

const RANK: Record<ContentDisposition, number> = { omit: 0, metadata: 1, body: 2 };
/**
 * Fields of opaque payloads that are not content slots and are never rewritten. (`native` is
 * opaque too, but kept only under `includeNative`; see `walk`.)
 */
const OPAQUE_FIELDS = new Set(['extensions', 'params']);

/** True for an object shaped like a canonical content part. */
export function isContentPart(value: unknown): value is JsonObject {
  return (
    isJsonObject(value) &&
    (value.kind === 'text' || value.kind === 'attachment') &&
    typeof value.mediaType === 'string' &&
    typeof value.selection === 'string'
  );
}

/** The content category of a part: its explicit `category`, else one derived from kind and media type. */
export function partCategory(part: JsonObject): string {
  if (typeof part.category === 'string') return part.category;
  if (part.kind === 'text') return 'text';
  const media = String(part.mediaType).toLowerCase();
  if (media.startsWith('image/')) return 'images';
  if (media.startsWith('audio/')) return 'audio';
  if (media.startsWith('video/')) return 'video';
  return 'files';
}

/** The disposition a selection gives a category (unknown categories fall to `default`). */
export function dispositionFor(selection: ContentSelection, category: string): ContentDisposition {
  return Object.hasOwn(selection.categories, category)
    ? (selection.categories[category] as ContentDisposition)
    : selection.default;
}

function currentDisposition(part: JsonObject): ContentDisposition {
  return part.selection === 'metadata' || part.selection === 'omit' ? part.selection : 'body';
}

/** The part as a subscription with `wanted` may see it, or undefined when it is omitted. */
function selectPart(part: JsonObject, wanted: ContentDisposition): JsonObject | undefined {
  const have = currentDisposition(part);
  const effective = RANK[wanted] < RANK[have] ? wanted : have;
  if (effective === 'omit') return undefined;
  if (effective === have) return part;
  // Downgrade body -> metadata: keep the descriptor, drop the bytes.
  const out: JsonObject = {};
  for (const key of ['id', 'kind', 'mediaType', 'category', 'synthesized', 'size', 'sha256']) {
    if (Object.hasOwn(part, key)) out[key] = part[key];
  }
  out.selection = 'metadata';
  if (typeof part.text === 'string' && part.gap === undefined) {
    if (out.size === undefined) out.size = Buffer.byteLength(part.text, 'utf8');
    if (out.sha256 === undefined) out.sha256 = sha256Hex(part.text);
  }
  return out;
}

function omitStub(part: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ['id', 'kind', 'mediaType', 'category']) {
    if (Object.hasOwn(part, key)) out[key] = part[key];
  }
  out.selection = 'omit';
  return out;
}

/** What a walk noticed on its way. */
interface Walk {
  selection: ContentSelection;
  /** Keep `native` payloads outside tool input (the subscription's `includeNative`). */
  includeNative: boolean;
  /** An attachment object was met, or a part that could hold one was kept without being walked. */
  attachments: boolean;
}

/** Notes what a part sent as `part` could hand on unwalked: an attachment, or any nested object. */
function notePart(part: JsonObject, state: Walk): void {
  if (state.attachments) return;
  if (part.kind === 'attachment') state.attachments = true;
  else
    for (const key in part) if (typeof part[key] === 'object' && part[key] !== null) state.attachments = true;
}

/**
 * The value as the subscription may see it. Copy on write: a list or object none of whose members
 * changes is returned as it is, so an event with nothing to withhold costs no copy at all.
 */
function walk(value: unknown, state: Walk): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      let next: unknown;
      if (isContentPart(item)) {
        next = selectPart(item, dispositionFor(state.selection, partCategory(item)));
        if (next !== undefined) notePart(next as JsonObject, state);
      } else {
        next = walk(item, state);
      }
      // `undefined` only for an omitted part: JSON holds no undefined items.
      if (out === undefined && next !== item) out = value.slice(0, i);
      if (out !== undefined && next !== undefined) out.push(next);
    }
    return out ?? value;
  }
  if (isContentPart(value)) {
    // Content parts are closed objects (no `native` member), so a kept part is sent as it is.
    const kept = selectPart(value, dispositionFor(state.selection, partCategory(value))) ?? omitStub(value);
    notePart(kept, state);
    return kept;
  }
  if (isJsonObject(value)) {
    if (value.kind === 'attachment') state.attachments = true;
    let out: JsonObject | undefined;
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const child = value[key];
      let next: unknown;
      let dropped = false;
      if (key === 'native') {
        dropped = !state.includeNative;
        next = child;
      } else if (OPAQUE_FIELDS.has(key)) {
        next = child;
      } else if (key === 'tool' && isJsonObject(child)) {
        next = walkTool(child, state);
      } else {
        next = walk(child, state);
      }
      if (out === undefined && (dropped || next !== child)) out = copyKeys(value, keys, i);
      if (out !== undefined && !dropped) put(out, key, next);
    }
    return out ?? value;
  }
  return value;
}

/** A fresh object with the first `count` of `keys` of `value` (before the first member that changes). */
function copyKeys(value: JsonObject, keys: readonly string[], count: number): JsonObject {
  const out: JsonObject = {};
  for (let i = 0; i < count; i++) {
    const key = keys[i] as string;
    put(out, key, value[key]);
  }
  return out;
}

/** Sets a member; a member named `__proto__` stays an ordinary member instead of a prototype. */
function put(out: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else out[key] = value;
}

/**
 * A tool object (`$defs/tool`), the event's own or a batch call's: its fields are walked, its
 * `input` is the tool's arguments and is kept as it is (as the attachment publisher also leaves
 * it), so a `native` key or a content-part-shaped value inside it is an argument, not content.
 */
function walkTool(tool: JsonObject, state: Walk): JsonObject {
  let out: JsonObject | undefined;
  const keys = Object.keys(tool);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const child = tool[key];
    const next = key === 'input' ? child : walk(child, state);
    if (out === undefined && next !== child) out = copyKeys(tool, keys, i);
    if (out !== undefined) put(out, key, next);
  }
  return out ?? tool;
}

/**
 * The event as one subscription may see it: content parts cut down by `selection`, `native`
 * removed at every depth unless `includeNative`. Tool input and other opaque payloads are kept
 * unchanged.
 */
export function selectContent<E extends JsonObject>(
  event: E,
  selection: ContentSelection,
  includeNative: boolean,
): E {
  return selectContentNoting(event, selection, includeNative).view;
}

/**
 * `selectContent`, also telling whether the view may hold an attachment part outside tool input
 * and opaque payloads. False is exact (no attachment can be there, so there is nothing to upload
 * or turn into a gap); true may be a false alarm (a part with a nested object).
 */
export function selectContentNoting<E extends JsonObject>(
  event: E,
  selection: ContentSelection,
  includeNative: boolean,
): { view: E; attachments: boolean } {
  const state: Walk = { selection, includeNative, attachments: false };
  // The event is an object like any other it holds: the same walk applies from the top.
  return { view: walk(event, state) as E, attachments: state.attachments };
}
