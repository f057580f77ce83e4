/** Where bytes stop being UTF-8: one answer for every reader that must name the byte at fault. */
import { isUtf8 } from 'node:buffer';

/**
 * Offset of the first byte of the first malformed UTF-8 sequence. Whether a prefix can still be
 * the start of valid UTF-8 is monotone in its length, so bisect for the longest such prefix, then
 * step back to the character boundary where the bad sequence begins.
 */
export function firstBadUtf8Byte(bytes: Uint8Array): number | undefined {
  if (isUtf8(bytes)) return undefined;
  const decodes = (n: number, stream: boolean) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n), { stream });
      return true;
    } catch {
      return false;
    }
  };
  let lo = 0;
  let hi = bytes.length + 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (decodes(mid, true)) lo = mid;
    else hi = mid;
  }
  let start = Math.min(lo, bytes.length);
  while (start > 0 && lo - start < 3 && !decodes(start, false)) start--;
  return start;
}
