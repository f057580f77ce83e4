/**
 * Where a tool call's paths really lead: each path the call names — or, for a shell command, each
 * file its redirections and commands read or write by a name known before it runs — is resolved
 * through symbolic links (the nearest existing ancestor when the file does not exist yet, as for a
 * write). Only paths whose real location differs are returned; the boundary records them
 * (`resolved`), so the verifier and the receipt read the same call the live judge judged without
 * touching a disk.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { NormalCall } from '../evidence/policy/judge.js';
import { shellFileEffects } from '../evidence/policy/shell-effects.js';
import type { ResolvedPath } from '../evidence/record/record.js';

function realPath(path: string): string {
  const missing: string[] = [];
  let at = path;
  for (;;) {
    try {
      const real = realpathSync(at);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch {
      const parent = dirname(at);
      if (parent === at) return path;
      missing.push(basename(at));
      at = parent;
    }
  }
}

/**
 * The files a shell command names that can be known before it runs (not computed, not a glob),
 * each absolute against where it runs and its `cd`s: the paths the judge matches them by.
 */
function shellTargets(command: string, cwd: string | undefined): string[] {
  if (cwd === undefined) return [];
  const effects = shellFileEffects(command, cwd);
  const out: string[] = [];
  for (const e of [...effects.writes, ...effects.reads])
    if (!e.dynamic && !e.glob && e.cwd !== undefined) out.push(resolve(e.cwd, e.path));
  return out;
}

/**
 * The call's paths that resolve elsewhere through links, as `{path, resolved}`: a file tool's path
 * as written; a shell command's file absolute, as the judge reads it.
 */
export function resolveLinks(call: NormalCall): ResolvedPath[] {
  const command = call.argument.command;
  const raw =
    command !== undefined
      ? shellTargets(command, call.base)
      : (call.argument.paths ?? (call.argument.path === undefined ? [] : [call.argument.path]));
  const out: ResolvedPath[] = [];
  const cwd = call.base;
  // A workspace that is itself reached through a link is not a link the call goes through: real
  // paths under the real cwd are said again under the cwd as the session names it.
  const realCwd = cwd === undefined || raw.length === 0 ? undefined : realPath(cwd);
  for (const path of raw) {
    if (path === '') continue;
    const absolute = isAbsolute(path) ? resolve(path) : cwd ? resolve(cwd, path) : undefined;
    if (absolute === undefined) continue;
    let real = realPath(absolute);
    if (cwd !== undefined && realCwd !== undefined && realCwd !== cwd) {
      const inside = relative(realCwd, real);
      if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) real = join(cwd, inside);
    }
    if (real !== absolute && !out.some((r) => r.path === path)) out.push({ path, resolved: real });
  }
  return out;
}
