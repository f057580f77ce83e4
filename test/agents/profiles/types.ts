/** What the runner needs to know about one agent CLI. */
import type { ScriptInput } from '../model/script.js';
import type { ModelServer } from '../model/server.js';

export interface ProfileContext {
  /** The run's temp root; home and tmp are inside it. */
  root: string;
  home: string;
  tmp: string;
  cwd: string;
  prompt: string;
  /** The scripted model server's base URL (no path). */
  modelUrl: string;
  /** The test's settings, to merge over the profile's own. */
  settings: Record<string, unknown>;
  permissive: boolean;
  outputFormat: string | undefined;
  /** Make the agent trust the hooks the test configured, where it requires that (Codex). */
  trustHooks: boolean;
}

export interface Prepared {
  args: string[];
  env: Record<string, string>;
  /** Files to write, by path relative to HOME (or absolute). */
  files: Record<string, string>;
}

export interface AgentProfile {
  startModel(script: ScriptInput): Promise<ModelServer>;
  prepare(ctx: ProfileContext): Prepared;
  parse(stdout: string, outputFormat: string | undefined): { json?: unknown; events?: unknown[] };
  /** Runs after the files are written, with the agent's binary and environment, before it starts. */
  beforeSpawn?(ctx: ProfileContext, bin: string, env: Record<string, string>): Promise<unknown>;
}

/** Deep merge of plain objects (arrays and scalars from `over` replace). */
export function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] =
      isPlain(prev) && isPlain(value)
        ? merge(prev as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}

function isPlain(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseJsonOutput(stdout: string): unknown {
  try {
    return JSON.parse(stdout) as unknown;
  } catch {
    return undefined;
  }
}

/** Parses JSON lines, keeping only the lines that are JSON (agents may print other text too). */
export function jsonLines(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      out.push(JSON.parse(t) as unknown);
    } catch {
      // Not a JSON line.
    }
  }
  return out;
}
