/**
 * The canonical AHP events the MCP gateway hands the boundary: `tool.before` for a `tools/call`
 * (judged before the server sees it), `tool.after` for its answer, and `dev.tally.mcp.tools` for
 * each `tools/list` answer (a digest pinning what the server said its tools are). Arguments go in
 * as the client sent them (the boundary redacts them); a result is kept as its digest and size,
 * never its content.
 */
import { canonicalize } from '../../core/canonical.js';
import { digest } from '../../core/hash.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';

/** Tally's source URI for events the MCP gateway captured. */
export const MCP_SOURCE = 'urn:tally:mcp';
/** The extension key of the gateway's own facts. */
export const MCP_EXTENSION = 'dev.tally.mcp';

/** The server the gateway fronts: its name (the `mcp__<name>__` prefix) and how it was started. */
export interface McpServerIdentity {
  name: string;
  command: string;
  args: string[];
  cwd: string;
}

/** One `tools/call` the gateway let through (or is judging). */
export interface McpCall {
  /** The AHP call id: unique within the gateway's run (JSON-RPC ids may be reused). */
  callId: string;
  requestId: string | number;
  toolName: string;
  input: JsonObject;
  kind?: string;
}

/** How a call ended, as the gateway saw it on the wire. */
export type McpCallEnd =
  | { type: 'result'; result: unknown; bytes: number }
  | { type: 'error'; code: unknown; message: string; bytes: number }
  | { type: 'cancelled'; why: string };

/** The name Claude Code gives an MCP tool, which certificates use: `mcp__<server>__<tool>`. */
export function qualifiedName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

function toolOf(server: McpServerIdentity, call: McpCall): JsonObject {
  return {
    origin: 'mcp',
    name: qualifiedName(server.name, call.toolName),
    ...(call.kind ? { kind: call.kind } : {}),
    input: call.input,
    mcp: {
      server: { id: server.name },
      toolName: call.toolName,
      provenance: 'runtime',
      connection: { transport: 'stdio', command: server.command, args: server.args, cwd: server.cwd },
    },
  };
}

function sessionOf(harnessSession: string, server: McpServerIdentity): JsonObject {
  return { id: harnessSession, cwd: server.cwd };
}

export function beforeEvent(
  server: McpServerIdentity,
  harnessSession: string,
  call: McpCall,
  time: Date,
): JsonObject {
  return {
    type: 'tool.before',
    time: time.toISOString(),
    source: MCP_SOURCE,
    session: sessionOf(harnessSession, server),
    call: { id: call.callId },
    path: 'mcp',
    tool: toolOf(server, call),
    extensions: { [MCP_EXTENSION]: { request_id: call.requestId } },
  };
}

/** A digest of a JSON value (its canonical form), or of its text when it has none (non-I-JSON numbers). */
function valueDigest(value: unknown): string {
  try {
    return digest(canonicalize(value));
  } catch {
    return digest(JSON.stringify(value) ?? 'undefined');
  }
}

/** The first text of a tool result's content, shortened: what an `isError` result says went wrong. */
function errorText(result: JsonObject): string {
  const content = Array.isArray(result.content) ? result.content : [];
  for (const item of content)
    if (isJsonObject(item) && item.type === 'text' && typeof item.text === 'string' && item.text !== '')
      return item.text.slice(0, 300);
  return 'the tool reported an error';
}

export function afterEvent(
  server: McpServerIdentity,
  harnessSession: string,
  call: McpCall,
  end: McpCallEnd,
  durationMs: number,
  time: Date,
): JsonObject {
  const facts: JsonObject = { request_id: call.requestId };
  let outcome: 'ok' | 'error' | 'cancelled' = 'ok';
  let error: JsonObject | undefined;
  if (end.type === 'result') {
    facts.result_digest = valueDigest(end.result);
    facts.result_bytes = end.bytes;
    const isError = isJsonObject(end.result) && end.result.isError === true;
    facts.is_error = isError;
    if (isError) {
      outcome = 'error';
      error = { message: errorText(end.result as JsonObject), class: 'tool' };
    }
  } else if (end.type === 'error') {
    outcome = 'error';
    facts.error_bytes = end.bytes;
    error = {
      message: end.message.slice(0, 300) || 'the server answered with an error',
      class: 'protocol',
      ...(typeof end.code === 'number' && Number.isInteger(end.code) ? { code: String(end.code) } : {}),
    };
  } else {
    outcome = 'cancelled';
    facts.cancelled = end.why;
  }
  return {
    type: 'tool.after',
    time: time.toISOString(),
    source: MCP_SOURCE,
    session: sessionOf(harnessSession, server),
    call: { id: call.callId },
    path: 'mcp',
    tool: toolOf(server, call),
    outcome,
    execution: { status: 'executed' },
    items: [],
    gaps: [{ path: 'items', reason: 'the tool result is kept as its digest, not recorded' }],
    durationMs: Math.max(0, durationMs),
    ...(error ? { error } : {}),
    extensions: { [MCP_EXTENSION]: facts },
  };
}

/** What a server said its tools are (names and a digest of the whole list), to pin them. */
export function toolsEvent(
  server: McpServerIdentity,
  harnessSession: string,
  tools: readonly unknown[],
  time: Date,
): JsonObject {
  const names = tools.flatMap((t) => (isJsonObject(t) && typeof t.name === 'string' ? [t.name] : []));
  return {
    type: 'dev.tally.mcp.tools',
    time: time.toISOString(),
    source: MCP_SOURCE,
    session: sessionOf(harnessSession, server),
    extensions: { [MCP_EXTENSION]: { server: server.name, tools: names, digest: valueDigest(tools) } },
  };
}
