/** RFC 3339 date-times, read strictly: one check for every layer. */

/** The digits of `text` from `start` to `end` as a number, or -1 when any is not a digit. */
function digits(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * RFC 3339 §5.6 `date-time` (`YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`, `T`/`Z` in either
 * case), with the §5.7 range restrictions (a leap second only at 23:59 UTC). Read by position,
 * without a regular expression: this runs for every event's `time`.
 */
export function isRfc3339DateTime(text: string): boolean {
  if (text.length < 20) return false;
  const sep = (i: number, c: string) => text[i] === c;
  if (!sep(4, '-') || !sep(7, '-') || !(sep(10, 'T') || sep(10, 't')) || !sep(13, ':') || !sep(16, ':'))
    return false;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return false;
  let i = 19;
  if (text[i] === '.') {
    const start = ++i;
    while (i < text.length && digits(text, i, i + 1) >= 0) i++;
    if (i === start) return false;
  }
  let offsetMinutes = 0;
  const zone = text[i];
  if (zone === 'Z' || zone === 'z') {
    if (i + 1 !== text.length) return false;
  } else if (zone === '+' || zone === '-') {
    if (i + 6 !== text.length || text[i + 3] !== ':') return false;
    const offHour = digits(text, i + 1, i + 3);
    const offMinute = digits(text, i + 4, i + 6);
    if (offHour < 0 || offHour > 23 || offMinute < 0 || offMinute > 59) return false;
    offsetMinutes = (zone === '-' ? -1 : 1) * (offHour * 60 + offMinute);
  } else return false;
  if (second === 60) {
    const utcMinutes = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
    if (utcMinutes !== 23 * 60 + 59) return false;
  }
  return true;
}
