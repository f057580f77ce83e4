/**
 * String formats a schema can only name, checked here in code: absolute URIs (RFC 3986 §3, used for
 * event `source`) and RFC 3339 §5.6 `date-time` (event `time`).
 */
import type { Issue } from '../registration-types.js';
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

export function isAbsoluteUri(text: string): boolean {
  return ABSOLUTE_URI.test(text);
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** RFC 3339 §5.6 `date-time`, with the §5.7 range restrictions (a leap second only at 23:59 UTC). */
export function isRfc3339DateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 60) return false;
  let offsetMinutes = 0;
  if (m[8] !== undefined) {
    const offHour = Number(m[9]);
    const offMinute = Number(m[10]);
    if (offHour > 23 || offMinute > 59) return false;
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (offHour * 60 + offMinute);
  }
  if (second === 60) {
    const utcMinutes = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
    if (utcMinutes !== 23 * 60 + 59) return false;
  }
  return true;
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
