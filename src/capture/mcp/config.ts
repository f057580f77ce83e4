/**
 * Putting an agent's MCP servers behind the gateway, and taking them out again: each stdio entry
 * of an `mcpServers` object (Claude Code's `.mcp.json`) gets `tally mcp --name <key> --` in front of
 * its command; everything else in the entry (env, type, …) is kept. The original entries are kept
 * apart (not in the agent's file, whose entries the agent validates), so that removal restores
 * exactly them, and only where the entry is still the one Tally wrote.
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { CaptureError } from '../types.js';

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export interface Wrapped {
  config: JsonObject;
  /** The entries as they were, by server name: what removal puts back. */
  originals: Record<string, JsonObject>;
  wrapped: string[];
  skipped: { server: string; reason: string }[];
}

function serversOf(config: JsonObject, where: string): JsonObject {
  const servers = config.mcpServers ?? {};
  if (!isJsonObject(servers))
    throw new CaptureError('bad-payload', `${where}: /mcpServers must be an object`, {
      pointer: '/mcpServers',
    });
  return servers;
}

/** The entry `tally` (its argv prefix) writes for a server: the gateway in front of its command. */
export function gatewayEntry(name: string, entry: JsonObject, tally: readonly string[]): JsonObject {
  const args = Array.isArray(entry.args) ? (entry.args as string[]) : [];
  return {
    ...entry,
    command: tally[0],
    args: [...tally.slice(1), 'mcp', '--name', name, '--', entry.command as string, ...args],
  };
}

/** True when an entry already runs through a gateway (ours or another copy's). */
export function isGatewayEntry(entry: unknown, tally: readonly string[]): boolean {
  if (!isJsonObject(entry) || entry.command !== tally[0] || !Array.isArray(entry.args)) return false;
  const prefix = tally.slice(1);
  return (
    prefix.every((a, i) => entry.args !== undefined && (entry.args as unknown[])[i] === a) &&
    (entry.args as unknown[])[prefix.length] === 'mcp'
  );
}

export function wrapServers(config: JsonObject, tally: readonly string[], where: string): Wrapped {
  const servers = serversOf(config, where);
  const out: JsonObject = {};
  const originals: Record<string, JsonObject> = {};
  const wrapped: string[] = [];
  const skipped: Wrapped['skipped'] = [];
  for (const [name, entry] of Object.entries(servers)) {
    out[name] = entry;
    const skip = (reason: string) => skipped.push({ server: name, reason });
    if (!isJsonObject(entry)) skip('the entry is not an object');
    else if (isGatewayEntry(entry, tally)) skip('already behind the gateway');
    else if (entry.type !== undefined && entry.type !== 'stdio')
      skip(`a ${String(entry.type)} server: the gateway relays stdio servers only`);
    else if (typeof entry.command !== 'string' || entry.command === '') skip('the entry has no command');
    else if (
      entry.args !== undefined &&
      !(Array.isArray(entry.args) && entry.args.every((a) => typeof a === 'string'))
    )
      skip('args is not a list of strings');
    else if (!SERVER_NAME.test(name) || name.includes('__'))
      skip("the name is not one the gateway can use (letters, digits, '_' and '-', no '__')");
    else {
      out[name] = gatewayEntry(name, entry, tally);
      originals[name] = entry;
      wrapped.push(name);
    }
  }
  return { config: { ...config, mcpServers: out }, originals, wrapped, skipped };
}

export interface Restored {
  config: JsonObject;
  restored: string[];
  /** Servers whose entry changed since Tally wrote it: left as they are. */
  kept: string[];
}

export function unwrapServers(
  config: JsonObject,
  originals: Record<string, JsonObject>,
  tally: readonly string[],
  where: string,
): Restored {
  const servers = { ...serversOf(config, where) };
  const restored: string[] = [];
  const kept: string[] = [];
  for (const [name, original] of Object.entries(originals)) {
    const current = servers[name];
    if (
      isJsonObject(current) &&
      JSON.stringify(current) === JSON.stringify(gatewayEntry(name, original, tally))
    ) {
      servers[name] = original;
      restored.push(name);
    } else kept.push(name);
  }
  return { config: { ...config, mcpServers: servers }, restored, kept };
}
