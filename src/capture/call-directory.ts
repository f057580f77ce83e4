/**
 * The directory a shell tool's own argument names: Gemini CLI's `run_shell_command {dir_path}`,
 * Qwen Code's `run_shell_command {directory}`, OpenCode's `bash {workdir}`. The agent runs the
 * command there, so the call's event says so in its `session.cwd` — as Codex's hooks report an
 * `exec_command`'s `workdir` as their `cwd` — and the policy reads the command's relative paths
 * from there (`echo x > a` with `dir_path: "protected"` writes `protected/a`).
 *
 * A relative directory is resolved against the session's cwd, as the pinned Gemini CLI and
 * OpenCode do (`path.resolve(<project dir>, dir)`; Qwen Code refuses one before its hook fires:
 * test/agents/README.md). A directory that cannot be read as such — not a string, empty (which
 * the agents take as their default directory), a control character or a backslash (which the
 * policy's paths would read as a slash), or relative with no session cwd to resolve it against —
 * leaves the event's cwd alone and marks the call opaque (`extensions["dev.tally.opaque"]`).
 */
import { posix } from 'node:path';
import { isJsonObject, type JsonObject } from '../core/json.js';

/** The extension naming why a call cannot be read; the policy judges such a call as opaque. */
export const OPAQUE_EXTENSION = 'dev.tally.opaque';

/** Each agent's shell tool and the argument naming the directory it runs in. */
export type CallDirectories = Readonly<Record<string, string>>;

const UNREADABLE = /[\x00-\x1f\x7f\\]/;

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/**
 * Where a directory argument points, against the session's cwd; a reason instead when it cannot be
 * read as a directory (see the module comment).
 */
export function directoryOf(
  value: unknown,
  cwd: unknown,
  named: string,
): { cwd: string } | { opaque: string } {
  const base = typeof cwd === 'string' && posix.isAbsolute(cwd) ? cwd : undefined;
  if (typeof value === 'string' && value !== '' && !UNREADABLE.test(value)) {
    if (posix.isAbsolute(value)) return { cwd: posix.resolve(value) };
    if (base !== undefined) return { cwd: posix.resolve(base, value) };
  }
  return {
    opaque: `${named} ${shown(value)} is not a directory Tally can read, so neither is where the command writes`,
  };
}

/** Puts an event where `found` says its call runs, or marks it opaque. */
export function placeEvent(event: JsonObject, found: { cwd: string } | { opaque: string }): void {
  if ('cwd' in found) {
    if (isJsonObject(event.session)) event.session.cwd = found.cwd;
    return;
  }
  const extensions = isJsonObject(event.extensions) ? event.extensions : {};
  extensions[OPAQUE_EXTENSION] = found.opaque;
  event.extensions = extensions;
}

/**
 * Points a tool event at the directory its call runs in, when the tool names one (`fields`: tool
 * name → argument). `event` is a `tool.*` event with `tool {name, input}` and `session`.
 */
export function applyCallDirectory(event: JsonObject, fields: CallDirectories): void {
  const tool = event.tool;
  const session = event.session;
  if (!isJsonObject(tool) || !isJsonObject(session) || typeof tool.name !== 'string') return;
  if (!Object.hasOwn(fields, tool.name)) return;
  const field = fields[tool.name] as string;
  const input = tool.input;
  if (!isJsonObject(input) || !Object.hasOwn(input, field)) return;
  placeEvent(event, directoryOf(input[field], session.cwd, `${tool.name}'s ${field}`));
}
