/**
 * Codex's `apply_patch` envelope: every file it adds, updates, deletes or moves. The envelope is
 * `*** Begin Patch` … `*** End Patch` with one header a file (`*** Add File: p`, `*** Update File:
 * p` optionally followed by `*** Move to: q`, `*** Delete File: p`); the policy judges these paths
 * before the patch runs (the alias table reads the same headers, src/core/patch-headers.ts), and
 * after it ran each becomes a file change of the call.
 */
import { patchHeaders } from '../../core/patch-headers.js';

export interface PatchChange {
  path: string;
  change: 'created' | 'modified' | 'deleted' | 'moved';
  /** The path a moved file had. */
  previousPath?: string;
}

const CHANGE = { 'Add File': 'created', 'Update File': 'modified', 'Delete File': 'deleted' } as const;

export function patchChanges(patch: string): PatchChange[] {
  const out: PatchChange[] = [];
  for (const header of patchHeaders(patch)) {
    // The path Codex itself reads comes first.
    const path = header.paths[0] as string;
    if (header.kind !== 'Move to') out.push({ path, change: CHANGE[header.kind] });
    else {
      // `Move to` renames the file the Update header before it named.
      const last = out.at(-1);
      if (last === undefined || last.change !== 'modified') continue;
      out[out.length - 1] = { path, change: 'moved', previousPath: last.path };
    }
  }
  return out;
}
