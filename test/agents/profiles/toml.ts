/**
 * A small TOML writer for agent config files (Codex's config.toml): strings, numbers, booleans,
 * arrays of scalars, nested tables and arrays of tables. Enough for config; not a general library.
 */

type Table = Record<string, unknown>;

function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isTableArray(v: unknown): v is Table[] {
  return Array.isArray(v) && v.length > 0 && v.every(isTable);
}

function key(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k);
}

function scalar(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(scalar).join(', ')}]`;
  if (isTable(v))
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${key(k)} = ${scalar(x)}`)
      .join(', ')} }`;
  throw new Error(`toml: cannot write ${typeof v}`);
}

function writeTable(path: string[], table: Table, out: string[]): void {
  const simple = Object.entries(table).filter(([, v]) => !isTable(v) && !isTableArray(v));
  const nested = Object.entries(table).filter(([, v]) => isTable(v) || isTableArray(v));
  const header = path.length > 0 && (simple.length > 0 || nested.length === 0);
  if (header) out.push(`[${path.map(key).join('.')}]`);
  for (const [k, v] of simple) out.push(`${key(k)} = ${scalar(v)}`);
  if (header || simple.length > 0) out.push('');
  for (const [k, v] of nested) {
    if (isTableArray(v)) {
      for (const item of v) {
        out.push(`[[${[...path, k].map(key).join('.')}]]`);
        const inner = Object.entries(item).filter(([, x]) => !isTable(x) && !isTableArray(x));
        for (const [ik, iv] of inner) out.push(`${key(ik)} = ${scalar(iv)}`);
        out.push('');
        const deeper = Object.fromEntries(
          Object.entries(item).filter(([, x]) => isTable(x) || isTableArray(x)),
        );
        if (Object.keys(deeper).length > 0) writeTableArrayChildren([...path, k], deeper, out);
      }
    } else writeTable([...path, k], v as Table, out);
  }
}

// Children of an array-of-tables element are written with the element's path (TOML attaches them
// to the most recent element).
function writeTableArrayChildren(path: string[], table: Table, out: string[]): void {
  for (const [k, v] of Object.entries(table)) {
    if (isTableArray(v)) {
      for (const item of v) {
        out.push(`[[${[...path, k].map(key).join('.')}]]`);
        for (const [ik, iv] of Object.entries(item)) out.push(`${key(ik)} = ${scalar(iv)}`);
        out.push('');
      }
    } else writeTable([...path, k], v as Table, out);
  }
}

export function toToml(table: Table): string {
  const out: string[] = [];
  writeTable([], table, out);
  return `${out.join('\n').trim()}\n`;
}
