/**
 * The agent's control plane: the files where an agent's hooks, plugins and MCP servers are
 * configured (for every harness Tally wires), and Tally's own state. An agent that writes them can
 * unhook itself for its next session, so a write there is escalated by default (certificate field
 * `control_plane`, docs/policy.md "The control plane"). The places are absolute paths read from the
 * session's record — the project root, the user's home and `TALLY_HOME` — so the live judge and
 * the verifier derive the same list. They are judged as path patterns are: normalised, through
 * recorded links, and case-insensitively like every forbid and escalate pattern.
 */

import { posix } from 'node:path';

/** How a write to the control plane is judged: escalated (the default), forbidden, or as any other write. */
export type ControlPlane = 'ask' | 'deny' | 'allow';

export const CONTROL_PLANE_MODES: readonly ControlPlane[] = ['ask', 'deny', 'allow'];

/** The absolute places the control plane is found under; each may be unknown. */
export interface ControlPlaces {
  /** The project root (the session's workspace). */
  project?: string;
  /** The user's home directory. */
  home?: string;
  /** Tally's home (`TALLY_HOME`). */
  tallyHome?: string;
}

/** One control-plane location: a path glob (for `Write(…)`), and how a reason names it. */
export interface ControlPlaneGlob {
  glob: string;
  place: string;
}

/** Files of the project that configure an agent's hooks, plugins or MCP servers (`/**`: the folder). */
const PROJECT = [
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.gemini/settings.json',
  '.qwen/settings.json',
  '.codex/config.toml',
  '.codex/hooks.json',
  '.opencode/**',
  'opencode.json',
  'opencode.jsonc',
  '.cursor/hooks.json',
  '.cursor/mcp.json',
  '.mcp.json',
  '.tally/**',
];

/** Folders of the user's home that configure the agents (every file in them). */
const HOME = ['.claude', '.gemini', '.qwen', '.codex', '.config/opencode', '.cursor'];

/** A literal path as a glob: the pattern language's `\` escapes `*` and itself. */
const literal = (path: string) => path.replace(/[\\*]/g, '\\$&');

/** An absolute place without `.` segments or a trailing slash. */
const clean = (path: string) => posix.normalize(path).replace(/(.)\/+$/, '$1');

/** The folders that hold a location, up to and with `base` itself: removing or moving one removes it. */
function holders(base: string, inside: string): string[] {
  const segments = inside.split('/').slice(0, -1);
  return [base, ...segments.map((_, i) => `${base}/${segments.slice(0, i + 1).join('/')}`)];
}

/** Every control-plane glob under the known places; a folder that holds one is a place too. */
export function controlPlaneGlobs(places: ControlPlaces): ControlPlaneGlob[] {
  const out = new Map<string, string>();
  const add = (base: string, inside: string, place: string) => {
    const folder = inside.endsWith('/**');
    const path = folder ? inside.slice(0, -3) : inside;
    for (const holder of holders(base, path))
      if (!out.has(literal(holder))) out.set(literal(holder), `a folder holding ${place}`);
    out.set(`${literal(`${base}/${path}`)}${folder ? '/**' : ''}`, place);
  };
  const { project, home, tallyHome } = places;
  if (project !== undefined) for (const inside of PROJECT) add(clean(project), inside, inside);
  if (home !== undefined) for (const folder of HOME) add(clean(home), `${folder}/**`, `~/${folder}/`);
  if (tallyHome !== undefined) out.set(`${literal(clean(tallyHome))}/**`, 'TALLY_HOME');
  return [...out].map(([glob, place]) => ({ glob, place }));
}
