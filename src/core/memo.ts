/**
 * A bounded memo for pure string functions on the hot path (redaction of the same paths, ids and
 * key names in every event). Only short inputs are kept, and the table is emptied when full, so its
 * memory stays bounded whatever the input; a result is the function's own, so memoising changes no
 * output, only how often it is computed.
 */
export function memoString<T>(
  fn: (input: string) => T,
  options: { entries: number; maxLength: number },
): (input: string) => T {
  const table = new Map<string, T>();
  return (input) => {
    if (input.length > options.maxLength) return fn(input);
    const hit = table.get(input);
    if (hit !== undefined) return hit;
    const out = fn(input);
    if (table.size >= options.entries) table.clear();
    table.set(input, out);
    return out;
  };
}
