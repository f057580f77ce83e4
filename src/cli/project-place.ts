/**
 * Where a file of Tally's own in the project (OpenCode's plugin) really is: the agent can write the
 * project, so a folder on the file's way may be a link it made (`.opencode` → another project,
 * `.opencode/plugin` → the user's own plugin folder), and writing or removing through it would act
 * outside the project the user named.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { FailureError } from './command.js';

/** `path` read through its links: its nearest part that is there, resolved, and the rest after it. */
function realPlace(path: string): string | undefined {
  let at = path;
  let rest = '';
  for (;;) {
    try {
      lstatSync(at);
      break;
    } catch {
      if (dirname(at) === at) return undefined;
      rest = rest === '' ? basename(at) : join(basename(at), rest);
      at = dirname(at);
    }
  }
  try {
    return join(realpathSync(at), rest);
  } catch {
    return undefined;
  }
}

/**
 * Refuses, before anything is written or removed, a file whose real place is outside the project
 * `root` (through a link on its way, or a link that leads nowhere), naming both.
 */
export function assertInProject(path: string, root: string): void {
  const real = realPlace(path);
  const top = realpathSync(root);
  if (real !== undefined && (real === top || real.startsWith(`${top}${sep}`))) return;
  throw new FailureError(
    `${path} ${real === undefined ? 'goes through a link that leads nowhere' : `is really ${real}`}, outside the project ${top}: a link on its way leads out of it; nothing was changed. Remove the link, or use --scope user for the user's own file`,
  );
}
