/** The canonical event's content items, built the one way every channel needs them. */
import type { JsonObject } from '../core/json.js';

/** Plain text as AHP text parts (`textParts`): one body part. */
export function textParts(partId: string, body: string): JsonObject[] {
  return [{ id: partId, kind: 'text', mediaType: 'text/plain', selection: 'body', text: body }];
}

/** One item of plain text (a prompt, a message) as a single body part: `[{id, role, parts}]`. */
export function textItems(
  itemId: string,
  role: string,
  body: string,
  partId = `${itemId}-text`,
): JsonObject[] {
  return [{ id: itemId, role, parts: textParts(partId, body) }];
}
