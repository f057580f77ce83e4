/**
 * `tally install claude-code --mcp` / `tally uninstall claude-code --mcp`: the project's `.mcp.json`
 * servers put behind the MCP gateway (docs/mcp.md), and put back. The entries as they were are kept
 * in the project's state (`.tally/mcp-servers.json`), never in the agent's file.
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

function files(ctx: CommandContext): { config: string; originals: string } {
  const where = placesOf(ctx);
  const root = where.project ? projectRootFor(where.project) : projectRootFor(ctx.cwd);
  return { config: join(root, '.mcp.json'), originals: join(where.state, 'mcp-servers.json') };
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

export function installMcpServers(ctx: CommandContext, dryRun: boolean, json: boolean): number {
  const { config, originals } = files(ctx);
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
    agent: 'claude-code',
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

export function uninstallMcpServers(ctx: CommandContext, dryRun: boolean, json: boolean): number {
  const { config, originals } = files(ctx);
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
      agent: 'claude-code',
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
