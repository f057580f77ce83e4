/**
 * Putting an agent's MCP servers behind the gateway, and taking them out again: each stdio server
 * of the agent's file gets `tally mcp --name <key> --` in front of its command; everything else in
 * the entry is kept. What was replaced is kept apart (not in the agent's file, whose entries the
 * agent validates), so that removal restores exactly it, and only where the entry is still what
 * Tally wrote. Each file format is an `McpFormat`: `mcpServers` JSON here (Claude Code's
 * `.mcp.json`, Gemini CLI's and Qwen Code's settings, Cursor's `.cursor/mcp.json`), Codex's TOML
 * (codex-config.ts) and OpenCode's JSONC (opencode-config.ts).
 */
import { parseJson } from '../../core/canonical.js';
import { isJsonObject, type JsonObject, jsonErrorMessage } from '../../core/json.js';
import { CaptureError } from '../types.js';

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export interface Skipped {
  server: string;
  reason: string;
}

/** One file rewritten: its new text, and what removal needs, by server. */
export interface Wrapped {
  text: string;
  originals: Record<string, JsonObject>;
  wrapped: string[];
  skipped: Skipped[];
}

export interface Restored {
  text: string;
  restored: string[];
  /** Servers whose entry changed since Tally wrote it: left as they are. */
  kept: string[];
}

/** A file format of MCP servers. `tally` is the argv prefix that runs Tally; `where` names the file. */
export interface McpFormat {
  wrap(text: string, tally: readonly string[], where: string): Wrapped;
  unwrap(
    text: string,
    originals: Record<string, JsonObject>,
    tally: readonly string[],
    where: string,
  ): Restored;
}

/** The command line Tally writes for server `name`: the gateway in front of its own. */
export function gatewayArgv(name: string, argv: readonly string[], tally: readonly string[]): string[] {
  return [...tally, 'mcp', '--name', name, '--', ...argv];
}

/** True when a command line already runs through a gateway (ours or another copy's). */
export function isGatewayArgv(argv: readonly unknown[], tally: readonly string[]): boolean {
  return tally.every((a, i) => argv[i] === a) && argv[tally.length] === 'mcp';
}

/** The reason a server given by a URL is left alone. */
export function remoteReason(what: string): string {
  return `${what}: the gateway relays stdio servers only (front it with tally mcp --http)`;
}

/**
 * Why the stdio server `name` with command line `argv` (a string command, then string arguments,
 * as the format checked) is not put behind the gateway; undefined when it is.
 */
export function refusal(name: string, argv: readonly string[], tally: readonly string[]): string | undefined {
  if (isGatewayArgv(argv, tally)) return 'already behind the gateway';
  if (!SERVER_NAME.test(name) || name.includes('__'))
    return "the name is not one the gateway can use (letters, digits, '_' and '-', no '__')";
  return undefined;
}

/** A list of strings, or undefined when `value` is not one. */
export function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((a) => typeof a === 'string') ? (value as string[]) : undefined;
}

function readObject(text: string, where: string): JsonObject {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new CaptureError(
      'bad-payload',
      `${where}: the MCP configuration is not JSON (${jsonErrorMessage(error)}); nothing was changed`,
    );
  }
  if (!isJsonObject(value))
    throw new CaptureError(
      'bad-payload',
      `${where}: the MCP configuration must be a JSON object; nothing was changed`,
    );
  return value;
}

function serversOf(config: JsonObject, where: string): JsonObject {
  const servers = config.mcpServers ?? {};
  if (!isJsonObject(servers))
    throw new CaptureError('bad-payload', `${where}: /mcpServers must be an object; nothing was changed`, {
      pointer: '/mcpServers',
    });
  return servers;
}

/** The entry Tally writes for a server of an `mcpServers` object. */
function gatewayEntry(name: string, entry: JsonObject, tally: readonly string[]): JsonObject {
  const [command, ...args] = gatewayArgv(
    name,
    [entry.command as string, ...(strings(entry.args) ?? [])],
    tally,
  );
  return { ...entry, command: command!, args };
}

function jsonSkip(name: string, entry: unknown, tally: readonly string[]): string | undefined {
  if (!isJsonObject(entry)) return 'the entry is not an object';
  if (entry.type !== undefined && entry.type !== 'stdio')
    return remoteReason(`a ${String(entry.type)} server`);
  const url = ['url', 'httpUrl'].find((k) => typeof entry[k] === 'string');
  if (entry.command === undefined && url) return remoteReason(`a remote server (${url})`);
  if (typeof entry.command !== 'string' || entry.command === '') return 'the entry has no command';
  const args = entry.args === undefined ? [] : strings(entry.args);
  if (args === undefined) return 'args is not a list of strings';
  return refusal(name, [entry.command, ...args], tally);
}

const text = (config: JsonObject) => `${JSON.stringify(config, null, 2)}\n`;

/** `{mcpServers: {name: {command, args, env, …}}}`: the whole entry is kept, and compared at removal. */
export const MCP_SERVERS_JSON: McpFormat = {
  wrap(source, tally, where) {
    const config = readObject(source, where);
    const out: JsonObject = {};
    const result: Wrapped = { text: source, originals: {}, wrapped: [], skipped: [] };
    for (const [name, entry] of Object.entries(serversOf(config, where))) {
      const reason = jsonSkip(name, entry, tally);
      out[name] = reason === undefined ? gatewayEntry(name, entry as JsonObject, tally) : entry;
      if (reason !== undefined) result.skipped.push({ server: name, reason });
      else {
        result.originals[name] = entry as JsonObject;
        result.wrapped.push(name);
      }
    }
    if (result.wrapped.length > 0) result.text = text({ ...config, mcpServers: out });
    return result;
  },
  unwrap(source, originals, tally, where) {
    const config = readObject(source, where);
    const servers = { ...serversOf(config, where) };
    const result: Restored = { text: source, restored: [], kept: [] };
    for (const [name, original] of Object.entries(originals)) {
      const current = servers[name];
      if (
        isJsonObject(current) &&
        JSON.stringify(current) === JSON.stringify(gatewayEntry(name, original, tally))
      ) {
        servers[name] = original;
        result.restored.push(name);
      } else result.kept.push(name);
    }
    if (result.restored.length > 0) result.text = text({ ...config, mcpServers: servers });
    return result;
  },
};

/** Replacements of spans of a text, applied from the last so earlier offsets hold. */
export function splice(source: string, edits: { start: number; end: number; text: string }[]): string {
  let out = source;
  for (const e of [...edits].sort((a, b) => b.start - a.start))
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}
