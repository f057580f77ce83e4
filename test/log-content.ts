/**
 * A session log's content as docs/formats.md defines it, read independently of the code under test:
 * the file's bytes less the zero bytes that run to its end (the space a writing store reserves
 * ahead of its appends). For tests that read a log a recorder still holds open.
 */
import { readFileSync } from 'node:fs';

export function logContent(path: string): Buffer {
  const bytes = readFileSync(path);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return bytes.subarray(0, end);
}
