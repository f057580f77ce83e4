/**
 * Where a `modify` effect's target lives in each boundary's event, and what shape its value has
 * (AHP-EDIT-001). Edits apply here to the full effective event, never to a subscription's view.
 */

import { parseJson } from '../../core/canonical.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';

export type TargetShape = 'list' | 'object' | 'json-text';

export interface TargetLocation {
  /** Property path from the event root. */
  path: readonly string[];
  /** 'list': message or text-part list; 'object': JSON object; 'json-text': one text part holding a serialized MCP ElicitResult whose `content` is edited. */
  shape: TargetShape;
}

const TARGETS: Record<string, Record<string, TargetLocation>> = {
  input: {
    'tool.before': { path: ['tool', 'input'], shape: 'object' },
    'tool.permission.request': { path: ['tool', 'input'], shape: 'object' },
  },
  output: { 'tool.after': { path: ['items'], shape: 'list' } },
  prompt: {
    'turn.start': { path: ['items'], shape: 'list' },
    'user.message.inbound': { path: ['message', 'messages'], shape: 'list' },
  },
  request: { 'model.request.before': { path: ['items'], shape: 'list' } },
  response: {
    'model.response.after': { path: ['items'], shape: 'list' },
    'turn.finish.before': { path: ['items'], shape: 'list' },
  },
  content: {
    'user.message.outbound': { path: ['message', 'messages'], shape: 'list' },
    'user.elicitation.result': { path: ['elicitation', 'result'], shape: 'json-text' },
  },
  instructions: { 'context.compact.before': { path: ['instructions'], shape: 'list' } },
  summary: { 'context.compact.after': { path: ['summary'], shape: 'list' } },
  workspace: { 'workspace.change.before': { path: ['workspace', 'change'], shape: 'object' } },
};

/** The location of `target` at boundary `eventType`, or undefined when the boundary has no such target. */
export function targetLocation(eventType: string, target: string): TargetLocation | undefined {
  return Object.hasOwn(TARGETS, target) ? TARGETS[target]?.[eventType] : undefined;
}

/** Reads the value at `path`, or undefined when any step is missing. */
export function readPath(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isJsonObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** Writes `value` at `path` in `root` (mutating it), creating intermediate objects. */
export function writePath(root: JsonObject, path: readonly string[], value: unknown): void {
  let node = root;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (!isJsonObject(next)) {
      const created: JsonObject = {};
      node[key] = created;
      node = created;
    } else {
      node = next;
    }
  }
  const last = path[path.length - 1];
  if (last !== undefined) node[last] = value;
}

/**
 * Applies one edit to a current target value. Returns the new value, or a string naming why the
 * edit cannot apply. List replace substitutes the whole list; list merge appends in order without
 * de-duplication; object replace drops omitted keys; object merge is shallow with literal null.
 */
export function applyEdit(
  shape: TargetShape,
  current: unknown,
  operation: 'replace' | 'merge',
  value: unknown,
): { value: unknown } | string {
  if (shape === 'list') {
    if (!Array.isArray(value)) return 'the value of a list target must be an array';
    if (operation === 'replace') return { value: structuredClone(value) };
    const base = current === undefined ? [] : current;
    if (!Array.isArray(base)) return 'the current target is not a list';
    return { value: [...structuredClone(base), ...structuredClone(value)] };
  }
  if (!isJsonObject(value)) return 'the value of an object target must be an object';
  if (shape === 'object') {
    if (operation === 'replace') return { value: structuredClone(value) };
    const base = current === undefined ? {} : current;
    if (!isJsonObject(base)) return 'the current target is not an object';
    return { value: { ...structuredClone(base), ...structuredClone(value) } };
  }
  // json-text: one text part whose text is serialized JSON (the MCP elicitation answer).
  if (!isJsonObject(current) || typeof current.text !== 'string')
    return 'the answer is not available as text';
  let parsed: unknown;
  try {
    parsed = parseJson(current.text);
  } catch {
    return 'the current answer is not JSON';
  }
  if (!isJsonObject(parsed)) return 'the current answer is not a JSON object';
  // The edited object is the MCP answer (`content` of the ElicitResult); the envelope stays.
  const answer = parsed.content === undefined ? {} : parsed.content;
  if (!isJsonObject(answer)) return 'the current answer content is not an object';
  const content = operation === 'replace' ? structuredClone(value) : { ...answer, ...structuredClone(value) };
  return { value: { ...current, text: JSON.stringify({ ...parsed, content }) } };
}

/** True when the list at a target holds any part whose text or body is withheld (metadata, omit, gap). */
export function holdsWithheldContent(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsWithheldContent);
  if (!isJsonObject(value)) return false;
  if (value.kind === 'text' || value.kind === 'attachment') {
    return value.selection !== 'body' || value.gap !== undefined;
  }
  return Object.values(value).some(holdsWithheldContent);
}
