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
 * `native` is removed unless the subscription sets `includeNative`. The input is never mutated.
 * The result is built for sending: parts and opaque payloads it keeps unchanged (tool input,
 * `native`, `extensions`, `params`) are the input's own objects, not copies, so treat both as
 * read-only while the result is in use.
 */
import { sha256Hex } from '../core/hash.js';
import type { ContentDisposition, ContentSelection } from './registration-types.js';

type JsonObject = Record<string, unknown>;

const RANK: Record<ContentDisposition, number> = { omit: 0, metadata: 1, body: 2 };
/** Fields of opaque payloads that are not content slots and are never rewritten. */
const OPAQUE_FIELDS = new Set(['native', 'extensions', 'params']);

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for an object shaped like a canonical content part. */
export function isContentPart(value: unknown): value is JsonObject {
  return (
    isObject(value) &&
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

function walk(value: unknown, selection: ContentSelection): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (isContentPart(item)) {
        const kept = selectPart(item, dispositionFor(selection, partCategory(item)));
        if (kept !== undefined) out.push(kept);
      } else {
        out.push(walk(item, selection));
      }
    }
    return out;
  }
  if (isObject(value)) {
    if (isContentPart(value)) {
      return selectPart(value, dispositionFor(selection, partCategory(value))) ?? omitStub(value);
    }
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      out[key] = OPAQUE_FIELDS.has(key) ? child : walk(child, selection);
    }
    return out;
  }
  return value;
}

/**
 * The event as one subscription may see it: content parts cut down by `selection`, `native`
 * removed unless `includeNative`. Tool input and other opaque payloads are copied unchanged.
 */
export function selectContent<E extends JsonObject>(
  event: E,
  selection: ContentSelection,
  includeNative: boolean,
): E {
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(event)) {
    if (key === 'native') {
      if (includeNative) out[key] = child;
      continue;
    }
    if (key === 'tool' && isObject(child)) {
      // Tool input is arguments, not content: copied as is. Other tool fields are walked.
      const tool: JsonObject = {};
      for (const [k, v] of Object.entries(child)) tool[k] = k === 'input' ? v : walk(v, selection);
      out[key] = tool;
      continue;
    }
    out[key] = OPAQUE_FIELDS.has(key) ? child : walk(child, selection);
  }
  return out as E;
}
