/**
 * Where a tool call's paths really lead: each path the call names — or, for a shell command, each
 * file its redirections and commands read or write by a name known before it runs — is resolved
 * through symbolic links (the nearest existing ancestor when the file does not exist yet, as for a
 * write). Only paths whose real location differs are returned; the boundary records them
 * (`resolved`), so the verifier and the receipt read the same call the live judge judged without
 * touching a disk.
 *
 * A path with `..` after a link has two readings, and both are judged: Node's `path.resolve` drops
 * `lnk/..` as text (Claude Code, Gemini CLI, Codex's patches, OpenCode's relative paths), while the
 * kernel goes to the parent of where `lnk` leads — bash's redirections and commands, and the
 * absolute paths Qwen Code's and OpenCode's file tools hand to the file system unresolved (measured
 * with the pinned agents: `lnk -> x/d`, `x/y -> ../protected`, then `lnk/../y/f` is `y/f` to the first
 * and `protected/f` to the second).
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
 * Where `path` (absolute, as written: `..` not taken off) leads as the kernel walks it: each `..`
 * goes to the parent of the folder reached so far, links followed. What does not exist yet is
 * taken as written, a `..` after it as its parent.
 */
function kernelPath(path: string): string {
  const native = (p: string): string | undefined => {
    try {
      return realpathSync.native(p);
    } catch {
      return undefined;
    }
  };
  const whole = native(path);
  if (whole !== undefined) return whole;
  let at = '/';
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') at = dirname(at);
    else {
      const next = join(at, part);
      at = native(next) ?? next;
    }
  }
  return at;
}

/** True when a `..` follows another part of `path`: the only case where the kernel can differ from the text. */
const climbs = (path: string): boolean => /(?:^|\/)[^/]+\/(?:.*\/)?\.\.(?:\/|$)/.test(path);

/**
 * The files a shell command names that can be known before it runs (not computed, not a glob):
 * each absolute against where it runs and its `cd`s, the path the judge matches it by, and as
 * bash hands it to the kernel (`raw`: its `..` kept).
 */
function shellTargets(command: string, cwd: string | undefined): { path: string; raw: string }[] {
  if (cwd === undefined) return [];
  const effects = shellFileEffects(command, cwd);
  const out: { path: string; raw: string }[] = [];
  for (const e of [...effects.writes, ...effects.reads])
    if (!e.dynamic && !e.glob && e.cwd !== undefined)
      out.push({ path: resolve(e.cwd, e.path), raw: isAbsolute(e.path) ? e.path : `${e.cwd}/${e.path}` });
  return out;
}

/**
 * The call's paths that resolve elsewhere through links, as `{path, resolved}`: a file tool's path
 * as written; a shell command's file absolute, as the judge reads it.
 */
export function resolveLinks(call: NormalCall): ResolvedPath[] {
  const command = call.argument.command;
  const cwd = call.base;
  const raw =
    command !== undefined
      ? shellTargets(command, cwd)
      : (call.argument.paths ?? (call.argument.path === undefined ? [] : [call.argument.path])).map(
          (path) => ({
            path,
            raw: isAbsolute(path) || cwd === undefined ? path : `${cwd}/${path}`,
          }),
        );
  const out: ResolvedPath[] = [];
  // A workspace that is itself reached through a link is not a link the call goes through: real
  // paths under the real cwd are said again under the cwd as the session names it.
  const realCwd = cwd === undefined || raw.length === 0 ? undefined : realPath(cwd);
  const underCwd = (real: string): string => {
    if (cwd === undefined || realCwd === undefined || realCwd === cwd) return real;
    const inside = relative(realCwd, real);
    return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)) ? join(cwd, inside) : real;
  };
  for (const { path, raw: written } of raw) {
    if (path === '') continue;
    const absolute = isAbsolute(path) ? resolve(path) : cwd ? resolve(cwd, path) : undefined;
    if (absolute === undefined) continue;
    const reals = [underCwd(realPath(absolute))];
    if (isAbsolute(written) && climbs(written)) reals.push(underCwd(kernelPath(written)));
    for (const real of reals)
      if (real !== absolute && !out.some((r) => r.path === path && r.resolved === real))
        out.push({ path, resolved: real });
  }
  return out;
}
