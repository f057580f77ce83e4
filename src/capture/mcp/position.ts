/** A reader's refusal, at the line and column (1-based) of an offset in the text it read. */
import { CaptureError } from '../types.js';

export function failAt(text: string, at: number, message: string): never {
  const before = text.slice(0, at).split('\n');
  const line = before.length;
  const column = before.at(-1)!.length + 1;
  throw new CaptureError('bad-payload', `line ${line}, column ${column}: ${message}`, { line, column });
}
