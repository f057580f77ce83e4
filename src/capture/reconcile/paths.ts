/**
 * Paths of a working tree as reconciliation keeps them: raw bytes (a latin1 string, one code unit
 * per byte) so a name that is not UTF-8 survives; `pathOut` turns one into what a record can carry.
 * And which paths under the project's `.tally/` Tally itself writes during a session, the only
 * ones the pass leaves out.
 */

/** A raw path (latin1 string of its bytes) as a record carries it: text, and the bytes when not UTF-8. */
export interface PathOut {
  path: string;
  path_b64?: string;
  non_utf8?: true;
}

export function rawPath(bytes: Buffer): string {
  return bytes.toString('latin1');
}

export function pathOut(raw: string): PathOut {
  const bytes = Buffer.from(raw, 'latin1');
  try {
    return { path: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { path: bytes.toString('utf8'), path_b64: bytes.toString('base64'), non_utf8: true };
  }
}

/** The raw form of a UTF-8 path as written in a record. */
export function rawOfText(path: string): string {
  return rawPath(Buffer.from(path, 'utf8'));
}

/** The file system's name of a raw path under `root` (bytes, so no name is re-encoded). */
export function nativePath(root: string, raw: string): Buffer {
  return Buffer.concat([Buffer.from(root, 'utf8'), Buffer.from('/'), Buffer.from(raw, 'latin1')]);
}

/** Byte order of two raw paths (latin1 strings: one code unit per byte). */
export function compareRaw(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether a raw path lies under one of `folders` (raw, no trailing slash), at any depth. */
export function underAny(raw: string, folders: ReadonlySet<string>): boolean {
  if (folders.size === 0) return false;
  for (let at = raw.indexOf('/'); at > 0; at = raw.indexOf('/', at + 1))
    if (folders.has(raw.slice(0, at))) return true;
  return false;
}

/**
 * What Tally writes under a state directory while a session runs: the sessions (their logs, the
 * current-session pointer, the recorder's wiring), sealed packages, and — when the project's
 * `.tally/` is also the Tally home — the recorder's run files, its spool, the chain heads and its
 * config. The rest of `.tally/` (the public key, certificates, `hooks.json`, the kept MCP entries
 * that uninstall restores, its `.gitignore`) is project content, reconciled like any file.
 */
const TALLY_FOLDERS = new Set(['sessions', 'packages', 'run', 'spool', 'heads', 'projects']);
const TALLY_FILES = new Set(['recorder.json']);

/** Whether a raw path is one Tally itself writes during a session under the project's `.tally/`. */
export function writtenByTally(raw: string): boolean {
  if (!raw.startsWith('.tally/')) return false;
  const rest = raw.slice('.tally/'.length);
  const slash = rest.indexOf('/');
  return slash < 0
    ? TALLY_FOLDERS.has(rest) || TALLY_FILES.has(rest)
    : TALLY_FOLDERS.has(rest.slice(0, slash));
}
