/**
 * Claude Code's native hook payloads → canonical AHP events. One function per native event the
 * pinned version sends (test/agents/README.md lists them and their payloads); the event keeps the
 * facts the receipt and the judge need, never a whole file's content: a Write's content is in its
 * tool input (redacted like any input), but tool responses are summarised, not copied.
 */
import { capabilityManifest } from '../../ahp/protocol/capabilities.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { TALLY_VERSION } from '../../core/version.js';
import { applyCallDirectory, type CallDirectories } from '../call-directory.js';
import { textItems, textParts } from '../items.js';
import { inferredMcp } from '../mcp-tool.js';
import { type Captured, CaptureError, type HarnessAgent } from '../types.js';
import { ClaudeFamilyAgents, claudeSubagentFile } from './agents.js';
import { claudeCodeModelLine, TranscriptModels } from './models.js';

/** Tally's source URI for events it translated from Claude Code. */
export const CLAUDE_CODE_SOURCE = 'urn:tally:claude-code';

/** Every native event this channel translates, and whether it can still be stopped. */
export const CLAUDE_CODE_EVENTS = {
  SessionStart: 'decide',
  UserPromptSubmit: 'decide',
  PreToolUse: 'decide',
  PermissionRequest: 'observe',
  PostToolUse: 'decide',
  PostToolUseFailure: 'observe',
  SubagentStart: 'observe',
  SubagentStop: 'observe',
  Stop: 'observe',
  PreCompact: 'observe',
  Notification: 'observe',
  SessionEnd: 'observe',
} as const;
export type ClaudeCodeEvent = keyof typeof CLAUDE_CODE_EVENTS;

/** AHP tool kinds for Claude Code's own tools (the alias table knows them too; this is the hint). */
const KINDS: Record<string, string> = {
  Bash: 'shell',
  Write: 'file_write',
  Edit: 'file_edit',
  MultiEdit: 'file_edit',
  NotebookEdit: 'file_edit',
  Read: 'file_read',
  WebFetch: 'fetch',
};

/**
 * One agent of the Claude Code hook family (Claude Code itself, Qwen Code, Codex): the same event
 * names and payload shape, its own tool names and its own way of reporting changed files.
 */
export interface ClaudeDialect {
  harness: string;
  /** The agent's name in error messages. */
  label: string;
  source: string;
  kinds: Readonly<Record<string, string>>;
  fileChanges: (payload: JsonObject) => JsonObject[];
  /** Tools whose argument names the directory they run in (../call-directory.ts). */
  directories?: CallDirectories;
}

export function text(payload: JsonObject, field: string, required = true): string | undefined {
  const value = payload[field];
  if (typeof value === 'string' && value !== '') return value;
  if (required)
    throw new CaptureError('bad-payload', `/${field}: the hook payload needs a non-empty string here`, {
      pointer: `/${field}`,
    });
  return undefined;
}

function agentOf(payload: JsonObject, sessionId: string): HarnessAgent {
  const id = text(payload, 'agent_id', false);
  if (id === undefined) return { instance: sessionId };
  const type = text(payload, 'agent_type', false);
  return { instance: id, parent: sessionId, ...(type ? { type } : {}) };
}

/** The AHP tool of a payload: MCP tools (`mcp__server__tool`) keep their origin. */
function toolOf(payload: JsonObject, d: ClaudeDialect): JsonObject {
  const name = text(payload, 'tool_name')!;
  const input = isJsonObject(payload.tool_input) ? payload.tool_input : {};
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  if (mcp) {
    return {
      origin: 'mcp',
      name,
      input,
      mcp: inferredMcp(mcp[1]!, mcp[2]!),
    };
  }
  return { origin: 'native', name, ...(d.kinds[name] ? { kind: d.kinds[name] } : {}), input };
}

function callOf(payload: JsonObject): JsonObject {
  const id = text(payload, 'tool_use_id', false);
  return id ? { id } : { id: `unidentified-${text(payload, 'session_id')}`, synthesized: true };
}

/** Files a tool reports having changed: Write/Edit's `filePath`, Bash's `bashEditDiff`. */
function claudeFileChanges(payload: JsonObject): JsonObject[] {
  const response = payload.tool_response;
  if (!isJsonObject(response)) return [];
  const out: JsonObject[] = [];
  if (typeof response.filePath === 'string' && response.filePath !== '') {
    const created = response.type === 'create' || response.originalFile === null;
    out.push({ path: response.filePath, change: created ? 'created' : 'modified' });
  }
  const diff = response.bashEditDiff;
  if (isJsonObject(diff) && Array.isArray(diff.files)) {
    for (const file of diff.files) {
      if (!isJsonObject(file) || typeof file.filePath !== 'string' || file.filePath === '') continue;
      out.push({ path: file.filePath, change: file.created === true ? 'created' : 'modified' });
    }
  }
  return out;
}

/** What of a tool response the record keeps: its size and shape, never its content. */
export function responseSummary(payload: JsonObject): JsonObject {
  const response = payload.tool_response;
  const summary: JsonObject = {};
  if (typeof response === 'string') summary.text_bytes = Buffer.byteLength(response);
  else if (isJsonObject(response)) {
    for (const field of ['stdout', 'stderr', 'content'] as const)
      if (typeof response[field] === 'string') summary[`${field}_bytes`] = Buffer.byteLength(response[field]);
    for (const field of ['interrupted', 'status', 'type', 'userModified', 'isAsync'] as const)
      if (typeof response[field] === 'string' || typeof response[field] === 'boolean')
        summary[field] = response[field];
    if (typeof response.agentId === 'string') summary.agent_id = response.agentId;
  }
  return summary;
}

function base(payload: JsonObject, type: string, d: ClaudeDialect, id?: string): JsonObject {
  const sessionId = text(payload, 'session_id')!;
  const cwd = text(payload, 'cwd', false);
  const agent = agentOf(payload, sessionId);
  return {
    ...(id ? { id } : {}),
    type,
    source: d.source,
    session: {
      id: sessionId,
      ...(cwd ? { cwd } : {}),
      agent: { id: agent.instance, type: agent.type ?? 'primary' },
    },
  };
}

function native(d: ClaudeDialect, event: string, extra: JsonObject = {}): JsonObject {
  return { 'dev.tally.native': { harness: d.harness, event, ...extra } };
}

type Builder = (payload: JsonObject, id: string | undefined, d: ClaudeDialect) => JsonObject;

const BUILDERS: Record<ClaudeCodeEvent, Builder> = {
  SessionStart: (p, id, d) => ({
    ...base(p, 'session.start', d, id),
    trigger: text(p, 'source', false) ?? 'startup',
    harness: { name: d.harness, version: 'unreported' },
    permissionMode: text(p, 'permission_mode', false) ?? 'default',
    manifest: capabilityManifest(),
    items: [],
    extensions: native(d, 'SessionStart', { adapter: `tally ${TALLY_VERSION}` }),
  }),
  UserPromptSubmit: (p, id, d) => {
    const turn = text(p, 'prompt_id', false) ?? `turn-${text(p, 'session_id')}`;
    return {
      ...base(p, 'turn.start', d, id),
      turn: { id: turn },
      trigger: 'user',
      items: textItems(`${turn}-prompt`, 'user', typeof p.prompt === 'string' ? p.prompt : ''),
      extensions: native(d, 'UserPromptSubmit'),
    };
  },
  PreToolUse: (p, id, d) => ({
    ...base(p, 'tool.before', d, id),
    call: callOf(p),
    path: 'native',
    tool: toolOf(p, d),
    extensions: native(d, 'PreToolUse'),
  }),
  PermissionRequest: (p, id, d) => ({
    ...base(p, 'tool.permission.request', d, id),
    call: { id: `permission-${text(p, 'session_id')}-${text(p, 'tool_name')}`, synthesized: true },
    path: 'native',
    tool: toolOf(p, d),
    suggestions: [],
    sandboxBypass: false,
    extensions: native(d, 'PermissionRequest'),
  }),
  PostToolUse: (p, id, d) => {
    const changes = d.fileChanges(p);
    return {
      ...base(p, 'tool.after', d, id),
      call: callOf(p),
      path: 'native',
      tool: toolOf(p, d),
      outcome: 'ok',
      execution: { status: 'executed' },
      items: [],
      gaps: [{ path: 'items', reason: 'the tool output is summarised, not recorded' }],
      ...(typeof p.duration_ms === 'number' && p.duration_ms >= 0 ? { durationMs: p.duration_ms } : {}),
      ...(changes.length > 0 ? { fileChanges: changes } : {}),
      extensions: native(d, 'PostToolUse', { response: responseSummary(p) }),
    };
  },
  PostToolUseFailure: (p, id, d) => ({
    ...base(p, 'tool.after', d, id),
    call: callOf(p),
    path: 'native',
    tool: toolOf(p, d),
    outcome: p.is_interrupt === true ? 'cancelled' : 'error',
    execution: { status: 'executed' },
    items: [],
    error: { message: text(p, 'error', false) ?? 'the tool failed', class: 'tool' },
    ...(typeof p.duration_ms === 'number' && p.duration_ms >= 0 ? { durationMs: p.duration_ms } : {}),
    extensions: native(d, 'PostToolUseFailure'),
  }),
  SubagentStart: (p, id, d) => ({
    ...base(p, 'dev.tally.agent.start', d, id),
    extensions: native(d, 'SubagentStart'),
  }),
  SubagentStop: (p, id, d) => ({
    ...base(p, 'dev.tally.agent.stop', d, id),
    extensions: native(d, 'SubagentStop', {
      ...(text(p, 'agent_transcript_path', false)
        ? { transcript_path: text(p, 'agent_transcript_path', false) }
        : {}),
    }),
  }),
  Stop: (p, id, d) => {
    const turn = text(p, 'prompt_id', false) ?? `turn-${text(p, 'session_id')}`;
    return {
      ...base(p, 'turn.end', d, id),
      turn: { id: turn },
      outcome: 'completed',
      continuationCount: 0,
      items: [],
      extensions: native(d, 'Stop'),
    };
  },
  PreCompact: (p, id, d) => ({
    ...base(p, 'context.compact.before', d, id),
    trigger: text(p, 'trigger', false) ?? 'auto',
    items: [],
    extensions: native(d, 'PreCompact'),
  }),
  Notification: (p, id, d) => ({
    ...base(p, 'user.attention', d, id),
    // AHP's attention: a kind, and a title and a message as text parts.
    attention: {
      kind: text(p, 'notification_type', false) || 'notification',
      title: textParts('attention-title', text(p, 'title', false) || 'Notification'),
      message: textParts('attention-message', text(p, 'message', false) ?? ''),
    },
    extensions: native(d, 'Notification'),
  }),
  SessionEnd: (p, id, d) => ({
    ...base(p, 'session.end', d, id),
    outcome: 'completed',
    reason: text(p, 'reason', false) ?? 'other',
    extensions: native(d, 'SessionEnd'),
  }),
};

export const CLAUDE_CODE_DIALECT: ClaudeDialect = {
  harness: 'claude-code',
  label: 'Claude Code',
  source: CLAUDE_CODE_SOURCE,
  kinds: KINDS,
  fileChanges: claudeFileChanges,
};

/** A hook payload of the Claude Code family as the canonical event the boundary takes. */
export function translateClaudeFamily(
  payload: unknown,
  d: ClaudeDialect,
  id?: string,
  events: Readonly<Record<string, 'decide' | 'observe'>> = CLAUDE_CODE_EVENTS,
  renamed?: string,
): Captured {
  if (!isJsonObject(payload))
    throw new CaptureError('bad-payload', `/: a ${d.label} hook payload is a JSON object`, { pointer: '' });
  const name = text(payload, 'hook_event_name')!;
  if (!Object.hasOwn(events, name) || !Object.hasOwn(BUILDERS, name))
    throw new CaptureError(
      'unknown-event',
      `/hook_event_name: '${name}' is not an event this channel translates`,
      {
        pointer: '/hook_event_name',
      },
    );
  const nativeEvent = name as ClaudeCodeEvent;
  const event = BUILDERS[nativeEvent](payload, id, d);
  if (d.directories !== undefined && event.tool !== undefined) applyCallDirectory(event, d.directories);
  const nativeName = renamed ?? nativeEvent;
  if (renamed !== undefined) {
    // The event keeps the name the agent itself used.
    const ext = (event.extensions as JsonObject)['dev.tally.native'] as JsonObject;
    ext.event = renamed;
  }
  const sessionId = text(payload, 'session_id')!;
  const cwd = text(payload, 'cwd', false);
  const transcriptPath = text(payload, 'transcript_path', false);
  return {
    mode: events[nativeEvent]!,
    event,
    harnessSession: sessionId,
    ...(cwd ? { cwd } : {}),
    ...(transcriptPath ? { transcriptPath } : {}),
    agent: agentOf(payload, sessionId),
    nativeEvent: nativeName,
  };
}

/**
 * Claude Code's subagents and models (./agents.ts): `Agent` spawns; a subagent's `.meta.json` and
 * transcript sit in `<session>/subagents/` beside the session's transcript.
 */
const CLAUDE_CODE_AGENTS = new ClaudeFamilyAgents({
  spawnTools: ['Agent'],
  metaPath: (transcript, agent) => claudeSubagentFile(transcript, agent, '.meta.json'),
  modelSource: (transcript, agent) => {
    if (agent === undefined) return { path: transcript, agent: '' };
    const path = claudeSubagentFile(transcript, agent, '.jsonl');
    return path === undefined ? undefined : { path, agent };
  },
  models: new TranscriptModels(claudeCodeModelLine),
});

/** A Claude Code hook payload as the canonical event the boundary takes. */
export function translateClaudeCode(payload: unknown, id?: string): Captured {
  const captured = translateClaudeFamily(payload, CLAUDE_CODE_DIALECT, id);
  return CLAUDE_CODE_AGENTS.attribute(captured, payload as JsonObject);
}
