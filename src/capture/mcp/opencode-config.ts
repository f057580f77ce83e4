/**
 * OpenCode's MCP servers: `mcp.<name>` of an opencode.json / opencode.jsonc (JSON with comments),
 * `{type: "local", command: ["cmd", "arg", …], environment, enabled, …}` or `{type: "remote",
 * url, …}`, and the newer `mcp.servers.<name>` map of the same entries, which the pinned OpenCode
 * reads too (an entry under `mcp` wins over one of the same name there). Tally replaces the
 * `command` array in place and keeps what it replaced as written; every other byte of the file
 * stays, comments included.
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { type JsoncNode, member, plain, readJsonc } from '../jsonc.js';
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

interface Entry {
  name: string;
  node: JsoncNode;
  /** Under `mcp.servers` and also under `mcp`: OpenCode reads the other. */
  shadowed: boolean;
}

function fail(where: string, message: string, pointer?: string): never {
  throw new CaptureError(
    'bad-payload',
    `${where}: ${message}; nothing was changed`,
    pointer ? { pointer } : {},
  );
}

/** A `type` or `enabled` that is not an object: what makes `servers` or `timeout` an entry to OpenCode. */
function entryLike(value: JsonObject): boolean {
  return ['type', 'enabled'].some((k) => k in value && !isJsonObject(value[k]));
}

function entries(text: string, where: string): Entry[] {
  let root: JsoncNode;
  try {
    root = readJsonc(text);
  } catch (error) {
    if (!(error instanceof CaptureError)) throw error;
    fail(where, `not JSON with comments (${error.message})`);
  }
  if (root.kind !== 'object') fail(where, 'the configuration must be an object');
  const mcp = member(root, 'mcp');
  if (mcp === undefined) return [];
  if (mcp.kind !== 'object') fail(where, '/mcp must be an object', '/mcp');
  const found: Entry[] = [];
  let map: JsoncNode | undefined;
  for (const { key, value } of mcp.members) {
    const v = plain(value);
    if (key === 'servers' && isJsonObject(v) && !entryLike(v)) map = value;
    else if (key === 'timeout' && isJsonObject(v) && !entryLike(v)) continue;
    else found.push({ name: key, node: value, shadowed: false });
  }
  if (map?.kind === 'object')
    for (const { key, value } of map.members)
      found.push({ name: key, node: value, shadowed: found.some((e) => e.name === key) });
  return found;
}

function argvOf(entry: Entry, tally: readonly string[]): string[] | string {
  if (entry.shadowed) return `also under mcp, whose entry OpenCode uses`;
  const value = plain(entry.node);
  if (!isJsonObject(value)) return 'the entry is not an object';
  if (value.type === 'remote') return remoteReason('a remote server (type remote)');
  if (value.type !== 'local') return "type is not 'local'";
  const argv = strings(value.command);
  if (argv === undefined || argv.length === 0 || argv[0] === '') return 'command is not a list of strings';
  return refusal(entry.name, argv, tally) ?? argv;
}

const arrayText = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;

export const OPENCODE_JSONC: McpFormat = {
  wrap(text, tally, where) {
    const result: Wrapped = { text, originals: {}, wrapped: [], skipped: [] };
    const edits: { start: number; end: number; text: string }[] = [];
    for (const entry of entries(text, where)) {
      const argv = argvOf(entry, tally);
      if (typeof argv === 'string') {
        result.skipped.push({ server: entry.name, reason: argv });
        continue;
      }
      const command = member(entry.node, 'command')!;
      edits.push({
        start: command.start,
        end: command.end,
        text: arrayText(gatewayArgv(entry.name, argv, tally)),
      });
      result.originals[entry.name] = { command: text.slice(command.start, command.end), argv };
      result.wrapped.push(entry.name);
    }
    result.text = splice(text, edits);
    return result;
  },
  unwrap(text, originals, tally, where) {
    const found = entries(text, where).filter((e) => !e.shadowed);
    const result: Restored = { text, restored: [], kept: [] };
    const edits: { start: number; end: number; text: string }[] = [];
    for (const [name, original] of Object.entries(originals)) {
      const argv = strings(original.argv);
      const command = member(found.find((e) => e.name === name)?.node, 'command');
      const now = command ? plain(command) : undefined;
      if (
        !argv ||
        typeof original.command !== 'string' ||
        !command ||
        JSON.stringify(now) !== JSON.stringify(gatewayArgv(name, argv, tally))
      ) {
        result.kept.push(name);
        continue;
      }
      edits.push({ start: command.start, end: command.end, text: original.command });
      result.restored.push(name);
    }
    result.text = splice(text, edits);
    return result;
  },
};
