/**
 * Codex's MCP servers: the `[mcp_servers.<name>]` tables of a config.toml (`command`, `args`,
 * `env`, `env_vars`, `cwd`, …; `url` for a streamable-HTTP server). Tally edits the text in
 * place: the `command` value and the `args` value (an `args` line is added under `command` when
 * there was none). Every other byte — comments, spacing, the other keys and tables — stays, and
 * what was replaced is kept as it was written, so removal puts back the same bytes. A server
 * written another way (an inline table, dotted keys under `[mcp_servers]`) is named and left alone.
 */
import type { JsonObject } from '../../core/json.js';
import { splice } from '../text-spans.js';
import { CaptureError } from '../types.js';
import {
  gatewayArgv,
  type McpFormat,
  type Restored,
  refusal,
  remoteReason,
  strings,
  type Wrapped,
} from './config.js';
import { readToml, type TomlStatement, tomlString, tomlStrings } from './toml.js';

interface CodexServer {
  table: boolean;
  command?: TomlStatement;
  args?: TomlStatement;
  url?: TomlStatement;
  /** A key of it is set outside its own `[mcp_servers.<name>]` table. */
  elsewhere: boolean;
}

const OWNED = ['command', 'args', 'url'];

function read(text: string, where: string) {
  try {
    return readToml(text);
  } catch (error) {
    if (!(error instanceof CaptureError)) throw error;
    throw new CaptureError('bad-payload', `${where}: ${error.message}; nothing was changed`, error.detail);
  }
}

/** The servers of a config.toml, by name, with the statements Tally edits. */
function codexServers(text: string, where: string): Map<string, CodexServer> {
  const doc = read(text, where);
  const servers = new Map<string, CodexServer>();
  const server = (name: string): CodexServer => {
    const known = servers.get(name);
    if (known) return known;
    const added: CodexServer = { table: false, elsewhere: false };
    servers.set(name, added);
    return added;
  };
  for (const t of doc.tables) {
    if (t.path[0] !== 'mcp_servers' || t.path.length !== 2) continue;
    const s = server(t.path[1]!);
    if (t.array) s.elsewhere = true;
    else if (s.table)
      throw new CaptureError(
        'bad-payload',
        `${where}: [mcp_servers.${t.path[1]}] is defined twice; nothing was changed`,
      );
    s.table = true;
  }
  for (const st of doc.statements) {
    const full = [...st.table, ...st.key];
    if (full[0] !== 'mcp_servers') continue;
    if (full.length === 1) {
      if (typeof st.value === 'object' && !Array.isArray(st.value))
        for (const name of Object.keys(st.value)) server(name).elsewhere = true;
      continue;
    }
    const s = server(full[1]!);
    const own = st.table.length === 2 && st.table[0] === 'mcp_servers' && st.key.length === 1;
    const key = full[2];
    if (full.length === 2) s.elsewhere = true;
    else if (own && OWNED.includes(key!)) {
      if (s[key as 'command'])
        throw new CaptureError(
          'bad-payload',
          `${where}: mcp_servers.${full[1]}.${key} is set twice; nothing was changed`,
        );
      s[key as 'command'] = st;
    } else if (full.length === 3 && OWNED.includes(key!)) s.elsewhere = true;
  }
  return servers;
}

/** The server's command line, or why it is not put behind the gateway. */
function argvOf(name: string, s: CodexServer, tally: readonly string[]): string[] | string {
  if (s.elsewhere || !s.table)
    return `not written as a [mcp_servers.${name}] table with its own command line (the one form Tally edits)`;
  if (s.url && s.command)
    return 'command and url are both set: the pinned Codex refuses the entry ("url is not supported for stdio") and loads no configuration at all';
  if (s.url) return remoteReason('a streamable-HTTP server (url)');
  if (!s.command) return 'the entry has no command';
  if (typeof s.command.value !== 'string' || s.command.value === '') return 'command is not a string';
  const args = s.args ? strings(s.args.value) : [];
  if (args === undefined) return 'args is not a list of strings';
  const argv = [s.command.value, ...args];
  return refusal(name, argv, tally) ?? argv;
}

/** The file's line end: CRLF when its lines end so. */
const lineEnd = (text: string) => (text.includes('\r\n') ? '\r\n' : '\n');

/** The indentation of the line holding `at` (what comes before it on its line). */
function indentOf(text: string, at: number): string {
  const start = text.lastIndexOf('\n', at - 1) + 1;
  return text.slice(start, at);
}

function kept(
  value: JsonObject | undefined,
): { command: string; args: string | null; argv: string[] } | undefined {
  const argv = strings(value?.argv);
  if (typeof value?.command !== 'string' || !(value.args === null || typeof value.args === 'string') || !argv)
    return undefined;
  return { command: value.command, args: value.args, argv };
}

export const CODEX_TOML: McpFormat = {
  wrap(text, tally, where) {
    const result: Wrapped = { text, originals: {}, wrapped: [], skipped: [] };
    const edits: { start: number; end: number; text: string }[] = [];
    for (const [name, s] of codexServers(text, where)) {
      const argv = argvOf(name, s, tally);
      if (typeof argv === 'string') {
        result.skipped.push({ server: name, reason: argv });
        continue;
      }
      const command = s.command!;
      const [program, ...args] = gatewayArgv(name, argv, tally);
      edits.push({ start: command.valueStart, end: command.valueEnd, text: tomlString(program!) });
      if (s.args) edits.push({ start: s.args.valueStart, end: s.args.valueEnd, text: tomlStrings(args) });
      else {
        // Under `command`, indented and ended as it is.
        const line = `${indentOf(text, command.start)}args = ${tomlStrings(args)}`;
        // (At the end of a file with no final newline, the file's own line end goes before it.)
        const own = text.slice(command.start, command.end);
        const eol = own.endsWith('\n') ? (own.endsWith('\r\n') ? '\r\n' : '\n') : lineEnd(text);
        edits.push({
          start: command.end,
          end: command.end,
          text: own.endsWith('\n') ? `${line}${eol}` : `${eol}${line}`,
        });
      }
      result.originals[name] = {
        command: text.slice(command.valueStart, command.valueEnd),
        args: s.args ? text.slice(s.args.valueStart, s.args.valueEnd) : null,
        argv,
      };
      result.wrapped.push(name);
    }
    result.text = splice(text, edits);
    return result;
  },
  unwrap(text, originals, tally, where) {
    const servers = codexServers(text, where);
    const result: Restored = { text, restored: [], kept: [] };
    const edits: { start: number; end: number; text: string }[] = [];
    for (const [name, value] of Object.entries(originals)) {
      const original = kept(value);
      const s = servers.get(name);
      const now =
        s?.command && s.args && !s.elsewhere ? [s.command.value, ...(strings(s.args.value) ?? [])] : [];
      if (
        !original ||
        !s ||
        JSON.stringify(now) !== JSON.stringify(gatewayArgv(name, original.argv, tally))
      ) {
        result.kept.push(name);
        continue;
      }
      const { command, args } = s as Required<CodexServer>;
      edits.push({ start: command.valueStart, end: command.valueEnd, text: original.command });
      if (original.args !== null)
        edits.push({ start: args.valueStart, end: args.valueEnd, text: original.args });
      else {
        // The line Tally added: removed with its newline (or the newline before it, at the end).
        const last = args.end === text.length && !text.endsWith('\n');
        let start = args.start - indentOf(text, args.start).length;
        if (last) start -= text[start - 2] === '\r' ? 2 : 1;
        edits.push({ start, end: args.end, text: '' });
      }
      result.restored.push(name);
    }
    result.text = splice(text, edits);
    return result;
  },
};
