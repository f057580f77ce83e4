/**
 * The close's own summary in a sealed package, read from the package's end: a close writes its
 * reconcile pass's summary among its last records (after it only the session's end and the seal),
 * so a long session's package is not read whole to find it. Its signature is checked with the
 * pinned keys; the rest of the package is not.
 */
import type { FileHandle } from 'node:fs/promises';
import { decodeBase64, verifyEnvelope } from '../core/dsse.js';
import type { PublicKeyInput } from '../core/keys.js';
import { openRegular, READ_NOFOLLOW } from '../core/regular-file.js';
import { isCloseRecord, RECONCILE_SUMMARY_TYPE } from '../evidence/record/close-passes.js';
import { decodeRecordPayload, MAX_LINE_BYTES, parseEnvelopeLine } from '../evidence/record/codec.js';
import type { EventRecord } from '../evidence/record/record.js';

/** How many of a package's last lines are looked at: the close's summary is among them. */
export const TAIL_LINES = 16;
/** The first window of a package's end read for them; it grows fourfold while it holds fewer lines. */
const TAIL_FIRST = 1 << 20;
/**
 * The most of a package's end read: the seal line and the close's summary may each be as long as a
 * line may be, and what follows the summary (its `session.end`) is short.
 */
const TAIL_MAX = 2 * (MAX_LINE_BYTES + 1) + TAIL_FIRST;

/** The last TAIL_LINES whole lines of a file of `size` bytes (fewer when it has fewer), read from its end. */
export async function lastLines(handle: FileHandle, size: number): Promise<Buffer[]> {
  for (let window = TAIL_FIRST; ; window *= 4) {
    const from = Math.max(0, size - Math.min(window, TAIL_MAX));
    const bytes = Buffer.alloc(size - from);
    for (let at = 0; at < bytes.length; ) {
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, from + at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    const lines: Buffer[] = [];
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 0x0a) end -= 1;
    while (lines.length < TAIL_LINES) {
      const newline = bytes.lastIndexOf(0x0a, end - 1);
      // The first line of a window that does not start the file may be cut: not taken.
      if (newline < 0 && from > 0) break;
      lines.unshift(bytes.subarray(newline + 1, end));
      if (newline < 0) break;
      end = newline;
    }
    if (lines.length === TAIL_LINES || from === 0 || window >= TAIL_MAX) return lines;
  }
}

/**
 * The close's own reconcile summary record of `session` among `lines` (the last first), its
 * signature checked with `trusted`; a reason when the line that claims to be it does not verify or
 * is another session's; undefined when there is none.
 */
export function closeSummaryIn(
  lines: readonly Buffer[],
  session: string,
  trusted: readonly PublicKeyInput[],
): EventRecord | string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    let envelope: unknown;
    let record: EventRecord;
    try {
      envelope = parseEnvelopeLine(lines[i]!);
      record = decodeRecordPayload(decodeBase64((envelope as { payload: string }).payload, 'payload'));
    } catch {
      continue; // the header, the seal: not records
    }
    if (!isCloseRecord(record, RECONCILE_SUMMARY_TYPE)) continue;
    try {
      verifyEnvelope(envelope, trusted, { strict: true });
    } catch (error) {
      return `its reconcile summary (seq ${record.seq}) does not verify with a pinned key: ${(error as Error).message}`;
    }
    if (record.session !== session)
      return `its reconcile summary is session ${record.session}'s, not ${session}'s`;
    return record;
  }
  return undefined;
}

/**
 * The close's own reconcile summary record of `session` in the package at `path`, read from its end
 * (`closeSummaryIn`); a reason when it cannot be read or does not verify.
 */
export async function packageCloseSummary(
  path: string,
  session: string,
  trusted: readonly PublicKeyInput[],
): Promise<EventRecord | string | undefined> {
  let handle: FileHandle;
  try {
    handle = await openRegular(path, READ_NOFOLLOW);
  } catch (error) {
    return `${path} cannot be read: ${(error as Error).message}`;
  }
  try {
    const { size } = await handle.stat();
    return closeSummaryIn(await lastLines(handle, size), session, trusted);
  } finally {
    await handle.close();
  }
}
