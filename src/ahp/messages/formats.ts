/**
 * String formats a schema can only name, checked here in code: absolute URIs (RFC 3986 §3, used for
 * event `source`) and RFC 3339 §5.6 `date-time` (event `time`).
 */
import { isRfc3339DateTime } from '../../core/time.js';
import type { Issue } from '../registration/types.js';
import { issue } from './shape.js';

const PCT = '%[0-9A-Fa-f]{2}';
const UNRESERVED = 'A-Za-z0-9\\-._~';
const SUB_DELIMS = "!$&'()*+,;=";
const PCHAR = `(?:[${UNRESERVED}${SUB_DELIMS}:@]|${PCT})`;
const SEGMENTS = `(?:${PCHAR}|/)*`;
const QUERY = `(?:${PCHAR}|[/?])*`;
const REG_NAME = `(?:[${UNRESERVED}${SUB_DELIMS}]|${PCT})*`;
const IP_LITERAL = `\\[(?:[0-9A-Fa-f:.]+|v[0-9A-Fa-f]+\\.[${UNRESERVED}${SUB_DELIMS}:]+)\\]`;
const USERINFO = `(?:[${UNRESERVED}${SUB_DELIMS}:]|${PCT})*`;
const AUTHORITY = `(?:${USERINFO}@)?(?:${IP_LITERAL}|${REG_NAME})(?::[0-9]*)?`;
const HIER_PART = `(?://${AUTHORITY}(?:/${SEGMENTS})?|(?!//)${SEGMENTS})`;

/** RFC 3986 `URI`: scheme, hierarchical part, optional query and fragment; no relative references. */
const ABSOLUTE_URI = new RegExp(`^[A-Za-z][A-Za-z0-9+.-]*:${HIER_PART}(?:\\?${QUERY})?(?:#${QUERY})?$`);

export { isRfc3339DateTime };

export function isAbsoluteUri(text: string): boolean {
  return ABSOLUTE_URI.test(text);
}

export function uriFormat(text: string, pointer: string, out: Issue[]): void {
  if (!isAbsoluteUri(text))
    issue(out, pointer, 'format.uri', `must be an absolute URI (RFC 3986), got ${JSON.stringify(text)}`);
}

export function dateTimeFormat(text: string, pointer: string, out: Issue[]): void {
  if (!isRfc3339DateTime(text)) {
    issue(
      out,
      pointer,
      'format.date-time',
      `must be an RFC 3339 date-time such as 2026-01-01T00:00:00Z, got ${JSON.stringify(text)}`,
    );
  }
}
