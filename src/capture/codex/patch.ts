/**
 * Codex's `apply_patch` envelope: every file it adds, updates, deletes or moves. The envelope is
 * `*** Begin Patch` … `*** End Patch` with one header a file (`*** Add File: p`, `*** Update File:
 * p` optionally followed by `*** Move to: q`, `*** Delete File: p`); the policy judges these paths
 * before the patch runs (the alias table reads the same headers), and after it ran each becomes a
 * file change of the call.
 */
export interface PatchChange {
  path: string;
  change: 'created' | 'modified' | 'deleted' | 'moved';
  /** The path a moved file had. */
  previousPath?: string;
}

// Codex trims each line before it looks for a header (its parser is lenient around the markers),
// so a header indented by a space, a tab or any other whitespace is a header to it — and to us.
const HEADER = /^\s*\*\*\* (Add File|Update File|Delete File|Move to): (.+)$/;

export function patchChanges(patch: string): PatchChange[] {
  const out: PatchChange[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const m = HEADER.exec(line);
    if (!m) continue;
    const path = m[2]!.trim();
    if (path === '') continue;
    if (m[1] === 'Add File') out.push({ path, change: 'created' });
    else if (m[1] === 'Update File') out.push({ path, change: 'modified' });
    else if (m[1] === 'Delete File') out.push({ path, change: 'deleted' });
    else {
      // `Move to` renames the file the Update header before it named.
      const last = out.at(-1);
      if (last === undefined || last.change !== 'modified') continue;
      out[out.length - 1] = { path, change: 'moved', previousPath: last.path };
    }
  }
  return out;
}
