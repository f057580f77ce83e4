/**
 * Putting an agent's MCP servers behind the gateway, and taking them out again: each stdio server
 * of the agent's file gets `tally mcp --name <key> --` in front of its command; everything else in
 * the entry is kept. What was replaced is kept apart (not in the agent's file, whose entries the
 * agent validates), so that removal restores exactly it, and only where the entry is still what
 * Tally wrote. Each file format is an `McpFormat`: `mcpServers` JSON here (Claude Code's
 * `.mcp.json`, Gemini CLI's and Qwen Code's settings, Cursor's `.cursor/mcp.json`, each with the
 * agent's own choice between `command` and a URL), Codex's TOML (codex-config.ts) and OpenCode's
 * JSONC (opencode-config.ts). Every format is edited in place.
 */
import { isDeepStrictEqual } from 'node:util';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { type JsoncNode, type JsonDialect, plain, readJsonc } from '../jsonc.js';
import { editJsonc } from '../jsonc-edit.js';
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

/**
 * Why an agent would not start an `mcpServers` entry by its `command` — it would dial a URL
 * instead, say — or undefined when it would. Each agent chooses the transport its own way.
 */
export type NotByCommand = (entry: JsonObject) => string | undefined;

/** A JSON value JavaScript's `if (value)` takes as set. */
const set = (value: unknown) => Boolean(value);

/** Claude Code picks the transport by `type`: none or `stdio` runs `command`, any other dials `url`. */
export const CLAUDE_CODE_TRANSPORT: NotByCommand = (e) =>
  e.type === undefined || e.type === 'stdio'
    ? undefined
    : remoteReason(`a ${String(e.type)} server (Claude Code picks the transport by type)`);

/** Gemini CLI dials `httpUrl` or `url` when either is set, whatever `command` says. */
export const GEMINI_CLI_TRANSPORT: NotByCommand = (e) => {
  const url = ['httpUrl', 'url'].find((k) => set(e[k]));
  return url
    ? remoteReason(`a remote server (Gemini CLI dials ${url} before it looks at command)`)
    : undefined;
};

/** Qwen Code: `type: "sdk"` is its own SDK's server; then `httpUrl`, then `url`, then `command`. */
export const QWEN_CODE_TRANSPORT: NotByCommand = (e) => {
  if (e.type === 'sdk') return 'an SDK server (type sdk): Qwen Code runs no command for it';
  const url = ['httpUrl', 'url'].find((k) => set(e[k]));
  return url
    ? remoteReason(`a remote server (Qwen Code dials ${url} before it looks at command)`)
    : undefined;
};

/**
 * Cursor's documented format: `command` (and `type: "stdio"`) for a local server, `url` for a
 * remote one. Which one wins when both are given is not documented, so such an entry is left alone.
 */
export const CURSOR_TRANSPORT: NotByCommand = (e) => {
  if (e.type !== undefined && e.type !== 'stdio') return remoteReason(`a ${String(e.type)} server`);
  if (e.url !== undefined)
    return remoteReason(
      "a server with a url (Cursor's documentation does not say whether it runs command then)",
    );
  return undefined;
};

function readObject(text: string, where: string, dialect: JsonDialect): JsoncNode {
  let root: JsoncNode;
  try {
    root = readJsonc(text, dialect);
  } catch (error) {
    if (!(error instanceof CaptureError)) throw error;
    throw new CaptureError(
      'bad-payload',
      `${where}: the MCP configuration is not ${dialect === 'json' ? 'JSON' : 'JSON (with comments)'} as the agent reads it (${error.message}); nothing was changed`,
      error.detail,
    );
  }
  if (root.kind !== 'object')
    throw new CaptureError(
      'bad-payload',
      `${where}: the MCP configuration must be a JSON object; nothing was changed`,
    );
  return root;
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

function jsonSkip(
  name: string,
  entry: unknown,
  tally: readonly string[],
  notByCommand: NotByCommand,
): string | undefined {
  if (!isJsonObject(entry)) return 'the entry is not an object';
  const remote = notByCommand(entry);
  if (remote !== undefined) return remote;
  if (typeof entry.command !== 'string' || entry.command === '') return 'the entry has no command';
  const args = entry.args === undefined ? [] : strings(entry.args);
  if (args === undefined) return 'args is not a list of strings';
  return refusal(name, [entry.command, ...args], tally);
}

/**
 * `{mcpServers: {name: {command, args, env, …}}}`, read as the agent reads it (`dialect`) and
 * edited in place: only `command` and `args` of each entry change, every other byte stays. The
 * whole entry is kept, and compared at removal. `notByCommand` is the agent's choice of transport.
 */
export function mcpServersJson(dialect: JsonDialect, notByCommand: NotByCommand): McpFormat {
  const edit = (source: string, root: JsoncNode, value: JsonObject, where: string) => {
    try {
      return editJsonc(source, root, value, dialect);
    } catch (error) {
      if (!(error instanceof CaptureError)) throw error;
      throw new CaptureError('bad-payload', `${where}: ${error.message}`, error.detail);
    }
  };
  return {
    wrap(source, tally, where) {
      const root = readObject(source, where, dialect);
      const config = plain(root) as JsonObject;
      const out: JsonObject = {};
      const result: Wrapped = { text: source, originals: {}, wrapped: [], skipped: [] };
      for (const [name, entry] of Object.entries(serversOf(config, where))) {
        const reason = jsonSkip(name, entry, tally, notByCommand);
        out[name] = reason === undefined ? gatewayEntry(name, entry as JsonObject, tally) : entry;
        if (reason !== undefined) result.skipped.push({ server: name, reason });
        else {
          result.originals[name] = entry as JsonObject;
          result.wrapped.push(name);
        }
      }
      if (result.wrapped.length > 0) result.text = edit(source, root, { ...config, mcpServers: out }, where);
      return result;
    },
    unwrap(source, originals, tally, where) {
      const root = readObject(source, where, dialect);
      const config = plain(root) as JsonObject;
      const servers = { ...serversOf(config, where) };
      const result: Restored = { text: source, restored: [], kept: [] };
      for (const [name, original] of Object.entries(originals)) {
        const current = servers[name];
        if (isJsonObject(current) && isDeepStrictEqual(current, gatewayEntry(name, original, tally))) {
          servers[name] = original;
          result.restored.push(name);
        } else result.kept.push(name);
      }
      if (result.restored.length > 0)
        result.text = edit(source, root, { ...config, mcpServers: servers }, where);
      return result;
    },
  };
}
