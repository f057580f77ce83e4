/**
 * `tally install <agent> --mcp` / `tally uninstall <agent> --mcp`: the stdio servers of the
 * project's MCP configuration put behind the MCP gateway (docs/mcp.md), and put back. Each agent's
 * project files and their format are in MCP_CONFIGS. What Tally replaced is kept in the project's
 * state (`.tally/mcp-servers.json` for Claude Code, `mcp-servers-<agent>.json` for the others, by
 * file), never in the agent's file. Every file is read and checked before any is written.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type CodexMcpView, codexMcpView } from '../capture/codex/mcp-view.js';
import { CODEX_TOML } from '../capture/mcp/codex-config.js';
import {
  CLAUDE_CODE_TRANSPORT,
  CURSOR_TRANSPORT,
  GEMINI_CLI_TRANSPORT,
  isGatewayArgv,
  type McpFormat,
  mcpServersJson,
  QWEN_CODE_TRANSPORT,
  type Skipped,
} from '../capture/mcp/config.js';
import { OPENCODE_JSONC } from '../capture/mcp/opencode-config.js';
import { parseJson } from '../core/canonical.js';
import { isJsonObject, type JsonObject } from '../core/json.js';
import { projectRootFor } from '../session/paths.js';
import { writeAtomic } from '../session/store.js';
import { assertWritableSettings, writeSettingsFile } from './agent-hooks.js';
import { type CommandContext, printJson, UsageError } from './command.js';
import { placesOf } from './session-context.js';
import { tallyParts } from './tally-bin.js';

interface McpConfig {
  /** The agent's project files of MCP servers, relative to the project root: each one present is rewritten. */
  files: string[];
  format: McpFormat;
  /** Said after an install: what else decides whether the agent runs these servers. */
  note?: string;
  /** Asks the agent, after an install, which servers it will run (`bin`: its executable). */
  check?: (root: string, env: NodeJS.ProcessEnv, bin: string | undefined) => Promise<Check>;
}

interface Check {
  report: JsonObject;
  /** What to tell a person. */
  lines: string[];
}

async function checkCodex(root: string, env: NodeJS.ProcessEnv, bin: string | undefined): Promise<Check> {
  let view: CodexMcpView;
  try {
    view = await codexMcpView(bin ?? 'codex', env, root, (argv) => isGatewayArgv(argv, tallyParts()));
  } catch (error) {
    const reason = (error as Error).message;
    return {
      report: { checked: false, reason },
      lines: [
        `could not ask Codex which servers it runs: ${reason} (--agent-bin names the codex executable). Codex reads .codex/config.toml only in a project it trusts`,
      ],
    };
  }
  const lines: string[] = [];
  if (view.projectSkipped !== null)
    lines.push(`Codex does not load ${root}/.codex/config.toml: ${view.projectSkipped}`);
  if (view.ungated.length > 0)
    lines.push(
      `Codex runs these stdio servers not through the gateway (from $CODEX_HOME/config.toml or another of its layers; Tally rewrites only the project's): ${view.ungated.join(', ')}`,
    );
  return {
    report: {
      checked: true,
      project_config: view.projectSkipped === null ? 'loaded' : 'skipped',
      ...(view.projectSkipped !== null ? { skipped_because: view.projectSkipped } : {}),
      not_behind_gateway: view.ungated,
    },
    lines,
  };
}

export const MCP_CONFIGS: Readonly<Record<string, McpConfig>> = {
  'claude-code': { files: ['.mcp.json'], format: mcpServersJson('json', CLAUDE_CODE_TRANSPORT) },
  'gemini-cli': {
    files: [join('.gemini', 'settings.json')],
    format: mcpServersJson('json-comments', GEMINI_CLI_TRANSPORT),
  },
  'qwen-code': {
    files: [join('.qwen', 'settings.json')],
    format: mcpServersJson('json-comments', QWEN_CODE_TRANSPORT),
  },
  cursor: { files: [join('.cursor', 'mcp.json')], format: mcpServersJson('json', CURSOR_TRANSPORT) },
  codex: {
    files: [join('.codex', 'config.toml')],
    format: CODEX_TOML,
    note: 'Codex hands a server only HOME, PATH and a few other variables: a TALLY_HOME other than ~/.tally must be named in the entry’s env_vars',
    check: checkCodex,
  },
  opencode: {
    files: [
      'opencode.jsonc',
      'opencode.json',
      join('.opencode', 'opencode.jsonc'),
      join('.opencode', 'opencode.json'),
    ],
    format: OPENCODE_JSONC,
  },
};

type Kept = Record<string, Record<string, JsonObject>>;

interface Target {
  config: McpConfig;
  root: string;
  /** The kept originals' file. */
  originals: string;
}

function targetOf(ctx: CommandContext, agent: string): Target {
  const config = MCP_CONFIGS[agent];
  if (config === undefined)
    throw new UsageError(
      `--mcp: ${agent} has no MCP configuration Tally rewrites; it does for ${Object.keys(MCP_CONFIGS).join(', ')}`,
    );
  const where = placesOf(ctx);
  const root = where.project ? projectRootFor(where.project) : projectRootFor(ctx.cwd);
  const kept = agent === 'claude-code' ? 'mcp-servers.json' : `mcp-servers-${agent}.json`;
  return { config, root, originals: join(where.state, kept) };
}

/** The kept originals by file (relative to the root); the first form kept one file's as `servers`. */
function readKept(target: Target): Kept {
  if (!existsSync(target.originals)) return {};
  let value: unknown;
  try {
    value = parseJson(readFileSync(target.originals));
  } catch (error) {
    throw new UsageError(
      `${target.originals}: the kept MCP entries are not JSON (${(error as Error).message})`,
    );
  }
  const files = isJsonObject(value) && isJsonObject(value.files) ? value.files : {};
  const out: Kept = {};
  for (const [file, servers] of Object.entries(files))
    if (isJsonObject(servers)) out[file] = servers as Record<string, JsonObject>;
  if (isJsonObject(value) && isJsonObject(value.servers))
    out[target.config.files[0]!] = {
      ...(value.servers as Record<string, JsonObject>),
      ...out[target.config.files[0]!],
    };
  return out;
}

function writeKept(target: Target, kept: Kept): void {
  const files = Object.fromEntries(Object.entries(kept).filter(([, s]) => Object.keys(s).length > 0));
  if (Object.keys(files).length === 0) rmSync(target.originals, { force: true });
  else writeAtomic(target.originals, `${JSON.stringify({ files }, null, 2)}\n`, 0o600);
}

/** The agent's files that exist, with their text and mode. */
function present(target: Target): { file: string; path: string; text: string; mode: number }[] {
  return target.config.files
    .map((file) => ({ file, path: join(target.root, file) }))
    .filter((f) => existsSync(f.path))
    .map((f) => ({ ...f, text: readFileSync(f.path, 'utf8'), mode: statSync(f.path).mode & 0o777 }));
}

export async function installMcpServers(
  ctx: CommandContext,
  agent: string,
  options: { dryRun: boolean; json: boolean; agentBin?: string },
): Promise<number> {
  const { dryRun, json } = options;
  const target = targetOf(ctx, agent);
  const found = present(target);
  if (found.length === 0)
    throw new UsageError(
      `${target.config.files.map((f) => join(target.root, f)).join(', ')}: no MCP servers to put behind the gateway`,
    );
  const kept = readKept(target);
  const results = found.map((f) => ({
    ...f,
    result: target.config.format.wrap(f.text, tallyParts(), f.path),
  }));
  const changed = results.filter((r) => r.result.wrapped.length > 0);
  if (!dryRun && changed.length > 0) {
    // Every file checked before any is written: a read-only one leaves all of them as they were.
    for (const r of changed) assertWritableSettings(r.path);
    for (const r of changed) kept[r.file] = { ...kept[r.file], ...r.result.originals };
    writeKept(target, kept);
    for (const r of changed) writeSettingsFile(r.path, r.result.text, r.mode);
  }
  const wrapped = results.flatMap((r) => r.result.wrapped);
  const skipped: Skipped[] = results.flatMap((r) => r.result.skipped);
  const files = results.map((r) => ({
    path: r.path,
    wrapped: r.result.wrapped,
    skipped: r.result.skipped,
    ...(dryRun ? { text: r.result.text } : {}),
  }));
  const check =
    !dryRun && target.config.check
      ? await target.config.check(target.root, ctx.env, options.agentBin)
      : undefined;
  if (json)
    printJson(ctx, {
      agent,
      path: results[0]!.path,
      wrapped,
      skipped,
      files,
      dry_run: dryRun,
      ...(check ? { [agent]: check.report } : {}),
    });
  else {
    for (const f of files) {
      ctx.stderr(
        `${dryRun ? 'would put' : 'put'} ${f.wrapped.length} MCP server(s) behind the gateway in ${f.path}${f.wrapped.length ? `: ${f.wrapped.join(', ')}` : ''}\n`,
      );
      for (const s of f.skipped) ctx.stderr(`  skipped ${s.server}: ${s.reason}\n`);
    }
    for (const line of check?.lines ?? []) ctx.stderr(`${line}\n`);
    if (target.config.note) ctx.stderr(`note: ${target.config.note}\n`);
  }
  return 0;
}

export function uninstallMcpServers(
  ctx: CommandContext,
  agent: string,
  dryRun: boolean,
  json: boolean,
): number {
  const target = targetOf(ctx, agent);
  const kept = readKept(target);
  const results = Object.entries(kept).map(([file, servers]) => {
    const path = join(target.root, file);
    if (!existsSync(path)) return { file, path, servers, mode: 0, result: undefined };
    const text = readFileSync(path, 'utf8');
    const result = target.config.format.unwrap(text, servers, tallyParts(), path);
    return { file, path, servers, mode: statSync(path).mode & 0o777, result };
  });
  if (!dryRun) {
    const restoring = results.filter((r) => r.result && r.result.restored.length > 0);
    for (const r of restoring) assertWritableSettings(r.path);
    for (const r of restoring) writeSettingsFile(r.path, r.result!.text, r.mode);
    // The originals of entries left as they are stay kept: a later uninstall can still restore them.
    for (const r of results)
      kept[r.file] = Object.fromEntries(
        (r.result?.kept ?? Object.keys(r.servers)).map((name) => [name, r.servers[name]!]),
      );
    writeKept(target, kept);
  }
  const restored = results.flatMap((r) => r.result?.restored ?? []);
  const left = results.flatMap((r) => r.result?.kept ?? Object.keys(r.servers));
  const path = results[0]?.path ?? join(target.root, target.config.files[0]!);
  if (json) printJson(ctx, { agent, path, restored, kept: left, dry_run: dryRun });
  else {
    for (const r of results) {
      ctx.stderr(`restored ${r.result?.restored.length ?? 0} MCP server(s) in ${r.path}\n`);
      for (const name of r.result?.kept ?? Object.keys(r.servers))
        ctx.stderr(
          `  left ${name} as it is: ${r.result ? 'it changed since Tally wrote it' : 'the file is gone'}\n`,
        );
    }
    if (results.length === 0) ctx.stderr('no MCP servers of this project are kept by Tally\n');
  }
  return 0;
}
