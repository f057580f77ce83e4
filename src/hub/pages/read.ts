/**
 * Reading untrusted JSON (a receipt or certificate taken from stored bytes) for display: every
 * accessor checks the type and falls back to empty, so a malformed value shows as missing rather
 * than breaking the page. What it shows is what the bytes claim; the verification panel says
 * whether they are genuine.
 */

export type Json = unknown;

export function obj(value: Json): Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, Json>)
    : {};
}

export function arr(value: Json): Json[] {
  return Array.isArray(value) ? value : [];
}

export function str(value: Json): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function num(value: Json): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function strs(value: Json): string[] {
  return arr(value).filter((v): v is string => typeof v === 'string');
}

/** `{name: count}` maps, non-numbers dropped. */
export function counts(value: Json): [string, number][] {
  return Object.entries(obj(value)).filter((e): e is [string, number] => typeof e[1] === 'number');
}
