/**
 * The AHP `tool.mcp` descriptor of an MCP tool a harness reports by name alone (Claude Code's
 * `mcp__server__tool`, OpenCode's `server_tool`): the server and tool read from the name, the
 * connection's location declared missing, since no hook payload says how the server was started.
 */
import type { JsonObject } from '../core/json.js';

export function inferredMcp(server: string, toolName: string): JsonObject {
  return {
    server: { id: server },
    toolName,
    provenance: 'inferred',
    connection: {
      transport: 'stdio',
      gaps: ['command', 'args', 'cwd'].map((path) => ({ path, reason: 'not reported by the harness' })),
    },
  };
}
