/**
 * stdio framing (AHP-STDIO-001): one complete UTF-8 JSON-RPC object per line, terminated by a
 * single `\n`, with no literal newline inside the JSON text and nothing else on the line.
 */

import { parseJson } from '../../core/canonical.js';
import { TallyError } from '../../core/errors.js';
import { isJsonObject } from '../../core/json.js';

export type FramingErrorCode = 'framing.empty' | 'framing.newline' | 'framing.json' | 'framing.not-object';

export class FramingError extends TallyError<FramingErrorCode> {}

/**
 * Parse one stdio frame. The line may end with its single terminating `\n`; any other CR or LF
 * (a pretty-printed object, two messages on two lines) is a framing error, as is trailing content
 * such as a second object, a banner or a log line, a batch array, or anything that is not one object.
 */
export function parseStdioLine(line: string): unknown {
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  const breakAt = body.search(/[\r\n]/);
  if (breakAt >= 0) {
    const byte = Buffer.byteLength(body.slice(0, breakAt), 'utf8');
    throw new FramingError(
      'framing.newline',
      `a stdio frame must be one JSON object on one line; found a literal ${body[breakAt] === '\r' ? 'CR' : 'LF'} at byte ${byte} (pretty-printed JSON or more than one message)`,
      { byte },
    );
  }
  if (body.trim() === '')
    throw new FramingError('framing.empty', 'empty stdio frame: expected one JSON-RPC object', { byte: 0 });
  let value: unknown;
  try {
    value = parseJson(body);
  } catch (error) {
    const detail = error instanceof TallyError ? error.detail : undefined;
    const reason = error instanceof Error ? error.message : String(error);
    throw new FramingError(
      'framing.json',
      `a stdio frame must hold exactly one JSON value: ${reason}`,
      detail,
    );
  }
  if (!isJsonObject(value)) {
    throw new FramingError(
      'framing.not-object',
      Array.isArray(value)
        ? 'JSON-RPC batches are not allowed: a stdio frame holds one object'
        : 'a stdio frame must hold a JSON-RPC object',
      { byte: 0 },
    );
  }
  return value;
}
