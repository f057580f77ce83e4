/**
 * Which MCP servers Codex itself will run for a project, asked of Codex (its app-server's
 * `config/read`, with the config layers): whether it loads the project's `.codex/config.toml` at
 * all (an untrusted project's is skipped, with Codex's reason), and the stdio servers of the
 * configuration it ends up with that do not run through a gateway (those of `$CODEX_HOME/config.toml`,
 * say). What `tally install codex --mcp` reports after it rewrote the project's file.
 */
import { join } from 'node:path';
import { isJsonObject } from '../../core/json.js';
import { withAppServer } from './trust.js';

export interface CodexMcpView {
  /** Codex's reason for not loading the project's `.codex/config.toml`, or null when it loads it. */
  projectSkipped: string | null;
  /** Enabled stdio servers of the resulting configuration whose command line `gated` refuses. */
  ungated: string[];
}

interface Layer {
  name?: { type?: string; dotCodexFolder?: string };
  disabledReason?: string | null;
}

export async function codexMcpView(
  codex: string,
  env: NodeJS.ProcessEnv,
  root: string,
  gated: (argv: readonly unknown[]) => boolean,
): Promise<CodexMcpView> {
  const result = await withAppServer(codex, env, root, (request) =>
    request('config/read', { cwd: root, includeLayers: true }),
  );
  const read = isJsonObject(result) ? result : {};
  const layers = (Array.isArray(read.layers) ? read.layers : []) as Layer[];
  const project = layers.find(
    (l) => l.name?.type === 'project' && l.name.dotCodexFolder === join(root, '.codex'),
  );
  const config = isJsonObject(read.config) ? read.config : {};
  const servers = isJsonObject(config.mcp_servers) ? config.mcp_servers : {};
  const ungated = Object.entries(servers)
    .filter(([, s]) => isJsonObject(s) && typeof s.command === 'string' && s.enabled !== false)
    .filter(([, s]) => {
      const entry = s as { command: string; args?: unknown };
      return !gated([entry.command, ...(Array.isArray(entry.args) ? entry.args : [])]);
    })
    .map(([name]) => name);
  return { projectSkipped: project?.disabledReason ?? null, ungated };
}
