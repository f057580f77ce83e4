/**
 * Small JSON helpers every layer needs: the object test and RFC 6901 JSON pointers. One copy, so
 * every layer answers the same about what an object is and how a pointer is spelled.
 */

export type JsonObject = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 6901 reference token: `~` becomes `~0`, `/` becomes `~1`. */
export function pointerToken(key: string | number): string {
  // Most keys need no escaping: skip the two replacements for them (validators call this per member).
  if (typeof key === 'number' || (!key.includes('~') && !key.includes('/'))) return String(key);
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The pointer of member `key` under `base` (`''` is the whole document). */
export function childPointer(base: string, key: string | number): string {
  return `${base}/${pointerToken(key)}`;
}

/** The pointer of a path of keys from the document root. */
export function pointerOf(path: readonly (string | number)[]): string {
  let out = '';
  for (const key of path) out += `/${pointerToken(key)}`;
  return out;
}

/** The unescaped reference tokens of a pointer (`''` → none). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/**
 * A JSON.parse error's message without the text it quotes (V8 repeats the input: `Unexpected token
 * 'h', "hunter2" is not valid JSON`), so an error about bad input never echoes a secret in it.
 */
export function jsonErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/, "[\s\S]*" is not valid JSON$/, ' is not valid JSON');
}
