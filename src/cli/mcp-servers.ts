/**
 * `tally install <agent> --mcp` / `tally uninstall <agent> --mcp`: the stdio servers of the
 * project's MCP configuration put behind the MCP gateway (docs/mcp.md), and put back — Claude Code's
 * `.mcp.json`, and the `mcpServers` of Gemini CLI's and Qwen Code's project settings (the same shape:
 * `{name: {command, args, env, …}}`). The entries as they were are kept in the project's state
 * (`.tally/mcp-servers.json`, `mcp-servers-<agent>.json`), never in the agent's file.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unwrapServers, wrapServers } from '../capture/mcp/config.js';
import { parseJson } from '../core/canonical.js';
import { isJsonObject, type JsonObject } from '../core/json.js';
import { projectRootFor } from '../session/paths.js';
import { writeAtomic } from '../session/store.js';
import { type CommandContext, printJson, UsageError } from './command.js';
import { placesOf } from './session-context.js';

const TALLY_BIN = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));

/** Each agent's project file of MCP servers, relative to the project root. */
export const MCP_CONFIGS: Readonly<Record<string, string>> = {
  'claude-code': '.mcp.json',
  'gemini-cli': join('.gemini', 'settings.json'),
  'qwen-code': join('.qwen', 'settings.json'),
};

function files(ctx: CommandContext, agent: string): { config: string; originals: string } {
  const file = MCP_CONFIGS[agent];
  if (file === undefined)
    throw new UsageError(
      `--mcp: ${agent} has no MCP configuration Tally rewrites; it does for ${Object.keys(MCP_CONFIGS).join(', ')}`,
    );
  const where = placesOf(ctx);
  const root = where.project ? projectRootFor(where.project) : projectRootFor(ctx.cwd);
  const kept = agent === 'claude-code' ? 'mcp-servers.json' : `mcp-servers-${agent}.json`;
  return { config: join(root, file), originals: join(where.state, kept) };
}

function readObject(path: string, what: string): JsonObject {
  let value: unknown;
  try {
    value = parseJson(readFileSync(path));
  } catch (error) {
    throw new UsageError(`${path}: ${what} is not JSON (${(error as Error).message}); nothing was changed`);
  }
  if (!isJsonObject(value))
    throw new UsageError(`${path}: ${what} must be a JSON object; nothing was changed`);
  return value;
}

const TALLY = [process.execPath, TALLY_BIN];

export function installMcpServers(
  ctx: CommandContext,
  agent: string,
  dryRun: boolean,
  json: boolean,
): number {
  const { config, originals } = files(ctx, agent);
  if (!existsSync(config)) throw new UsageError(`${config}: no MCP servers to put behind the gateway`);
  const before = readObject(config, 'the MCP configuration');
  const kept = existsSync(originals) ? readObject(originals, 'the kept MCP entries') : {};
  const result = wrapServers(before, TALLY, config);
  const all = {
    ...(isJsonObject(kept.servers) ? (kept.servers as Record<string, JsonObject>) : {}),
    ...result.originals,
  };
  if (!dryRun && result.wrapped.length > 0) {
    writeAtomic(originals, `${JSON.stringify({ servers: all }, null, 2)}\n`, 0o600);
    writeAtomic(config, `${JSON.stringify(result.config, null, 2)}\n`, 0o644);
  }
  const report = {
    agent,
    path: config,
    wrapped: result.wrapped,
    skipped: result.skipped,
    dry_run: dryRun,
  };
  if (json) printJson(ctx, dryRun ? { ...report, config: result.config } : report);
  else {
    ctx.stderr(
      `${dryRun ? 'would put' : 'put'} ${result.wrapped.length} MCP server(s) behind the gateway in ${config}${result.wrapped.length ? `: ${result.wrapped.join(', ')}` : ''}\n`,
    );
    for (const s of result.skipped) ctx.stderr(`  skipped ${s.server}: ${s.reason}\n`);
  }
  return 0;
}

export function uninstallMcpServers(
  ctx: CommandContext,
  agent: string,
  dryRun: boolean,
  json: boolean,
): number {
  const { config, originals } = files(ctx, agent);
  const kept = existsSync(originals) ? readObject(originals, 'the kept MCP entries') : {};
  const servers = isJsonObject(kept.servers) ? (kept.servers as Record<string, JsonObject>) : {};
  const result =
    existsSync(config) && Object.keys(servers).length > 0
      ? unwrapServers(readObject(config, 'the MCP configuration'), servers, TALLY, config)
      : { config: {}, restored: [], kept: Object.keys(servers) };
  if (!dryRun) {
    if (result.restored.length > 0) writeAtomic(config, `${JSON.stringify(result.config, null, 2)}\n`, 0o644);
    // The originals of entries left as they are stay kept: a later uninstall can still restore them.
    const left = Object.fromEntries(
      result.kept.filter((name) => name in servers).map((name) => [name, servers[name]!]),
    );
    if (Object.keys(left).length > 0)
      writeAtomic(originals, `${JSON.stringify({ ...kept, servers: left }, null, 2)}\n`, 0o600);
    else rmSync(originals, { force: true });
  }
  if (json)
    printJson(ctx, {
      agent,
      path: config,
      restored: result.restored,
      kept: result.kept,
      dry_run: dryRun,
    });
  else {
    ctx.stderr(`restored ${result.restored.length} MCP server(s) in ${config}\n`);
    for (const name of result.kept) ctx.stderr(`  left ${name} as it is: it changed since Tally wrote it\n`);
  }
  return 0;
}
