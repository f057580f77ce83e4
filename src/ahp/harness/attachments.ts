/**
 * Upload before publish (AHP content upload binding): a non-text attachment travels out of band.
 * The host hands the dispatcher an event whose attachment parts selected as `body` carry no `body`
 * yet (they are pending) plus the bytes of each, by part id. Before any message that references
 * such a part is sent to a subscription, the bytes go to that subscription's upload endpoint, and
 * the part gets the receiver-allocated `body: {ref}` from the verified 201 receipt. Every
 * subscription uploads to its own endpoint with its own credentials, so refs are never shared.
 *
 * When a part cannot be published (no bytes, no upload binding, or the upload failed) it becomes
 * a gap: `selection: "body"` plus `gap.reason`, with `size` and `sha256` when the bytes are known.
 * Bytes are never inlined and no path or URL is sent. The caller applies the failure policy: an
 * interceptor's failed upload is an operational failure; an observer simply receives the gap.
 * Metadata selections upload nothing and gain `size` and `sha256` from the bytes.
 */

import { sha256Hex } from '../../core/hash.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import type { UploadReceipt } from '../transports/upload.js';

/** What uploads one attachment: an `Uploader` (./upload.ts) or anything with its contract. */
export interface AttachmentUploader {
  upload(bytes: Uint8Array, signal?: AbortSignal): Promise<UploadReceipt>;
}

/** Attachment bytes by content part id. */
export type AttachmentBytes = ReadonlyMap<string, Uint8Array>;

export interface PublishOutcome {
  /** The event to send: the input when nothing needed publishing, else a copy. */
  event: JsonObject;
  /** Refs allocated, by part id. */
  published: Map<string, string>;
  /** Why parts became gaps (local audit only; never sent). */
  failures: string[];
}

/** Fields that are not content slots (opaque payloads and tool arguments). */
const OPAQUE_FIELDS = new Set(['native', 'extensions', 'params', 'input']);

function isAttachment(value: unknown): value is JsonObject {
  return isJsonObject(value) && value.kind === 'attachment' && typeof value.id === 'string';
}

/** A body-selected attachment that has no reference yet. */
export function isPendingAttachment(value: unknown): value is JsonObject {
  return (
    isAttachment(value) && value.selection === 'body' && value.gap === undefined && value.body === undefined
  );
}

/** Every attachment part of `value` outside opaque fields, in document order. */
function attachments(value: unknown, out: JsonObject[] = []): JsonObject[] {
  if (Array.isArray(value)) for (const item of value) attachments(item, out);
  else if (isJsonObject(value)) {
    if (isAttachment(value)) out.push(value);
    else
      for (const [key, child] of Object.entries(value)) if (!OPAQUE_FIELDS.has(key)) attachments(child, out);
  }
  return out;
}

/** True when `event` holds a pending attachment or an attachment whose bytes are known. */
export function needsPublishing(event: JsonObject, bytes: AttachmentBytes | undefined): boolean {
  return attachments(event).some(
    (part: JsonObject) => bytes?.has(String(part.id)) || isPendingAttachment(part),
  );
}

function toGap(part: JsonObject, reason: string, data: Uint8Array | undefined): void {
  delete part.body;
  part.selection = 'body';
  part.gap = { reason };
  if (data !== undefined) {
    part.size = data.length;
    part.sha256 = sha256Hex(data);
  }
}

/**
 * Publishes the pending attachments of one subscription's `view` (after content selection) and
 * returns the event to send. Uploads run concurrently and all finish before this resolves.
 */
export async function publishAttachments(
  view: JsonObject,
  bytes: AttachmentBytes | undefined,
  uploader: AttachmentUploader | undefined,
  signal?: AbortSignal,
): Promise<PublishOutcome> {
  const outcome: PublishOutcome = { event: view, published: new Map(), failures: [] };
  if (!needsPublishing(view, bytes)) return outcome;
  const event = structuredClone(view);
  outcome.event = event;
  const work: Promise<void>[] = [];
  for (const part of attachments(event)) {
    const id = String(part.id);
    const data = bytes?.get(id);
    if (part.selection === 'metadata' && data !== undefined) {
      part.size ??= data.length;
      part.sha256 ??= sha256Hex(data);
      continue;
    }
    if (!isPendingAttachment(part)) continue;
    if (data === undefined) {
      outcome.failures.push(`attachment ${id}: its bytes are not available`);
      toGap(part, 'attachment bytes unavailable', undefined);
      continue;
    }
    if (uploader === undefined) {
      outcome.failures.push(`attachment ${id}: the subscription has no upload binding`);
      toGap(part, 'no upload endpoint configured', data);
      continue;
    }
    work.push(
      uploader.upload(data, signal).then(
        (receipt) => {
          part.body = { ref: receipt.ref };
          outcome.published.set(id, receipt.ref);
        },
        (error: unknown) => {
          outcome.failures.push(
            `attachment ${id}: ${error instanceof Error ? error.message : String(error)}`,
          );
          toGap(part, 'upload failed', data);
        },
      ),
    );
  }
  await Promise.all(work);
  return outcome;
}
