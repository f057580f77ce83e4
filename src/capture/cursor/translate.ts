/**
 * Cursor's hook payloads (`.cursor/hooks.json` command hooks) → canonical AHP events. No Cursor
 * CLI runs here: the shapes are Cursor's documented ones (every event: `hook_event_name,
 * conversation_id, generation_id, workspace_roots`; shell: `command, cwd` (+ `output, duration`
 * after); MCP: `tool_name, tool_input` (+ `result_json`); `beforeReadFile`: `file_path, content`;
 * `afterFileEdit`: `file_path, edits`; `beforeSubmitPrompt`: `prompt`), and the tests are built
 * from them. A file's content and an edit's strings are never kept: only the path. Cursor reports
 * no call id: see callId.
 */
import { parseJson } from '../../core/canonical.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { CallPairing } from '../call-pairing.js';
import { textItems } from '../items.js';
import { type Captured, CaptureError } from '../types.js';

export const CURSOR_SOURCE = 'urn:tally:cursor';

export const CURSOR_EVENTS = {
  beforeSubmitPrompt: 'decide',
  beforeShellExecution: 'decide',
  beforeMCPExecution: 'decide',
  beforeReadFile: 'decide',
  afterShellExecution: 'observe',
  afterMCPExecution: 'observe',
  afterFileEdit: 'observe',
  stop: 'observe',
} as const;
export type CursorEvent = keyof typeof CURSOR_EVENTS;

function text(p: JsonObject, name: string, required = true): string | undefined {
  const v = p[name];
  if (typeof v === 'string' && v !== '') return v;
  if (required)
    throw new CaptureError('bad-payload', `/${name}: the hook payload needs a non-empty string here`, {
      pointer: `/${name}`,
    });
  return undefined;
}

/**
 * Cursor reports no call id. A before/after pair (shell, MCP) is paired by its conversation,
 * generation and what the call names, each before with an id of its own (./call-pairing.ts); a
 * read (before only) and a file edit (after only) get a fresh id each.
 */
const CALLS = new CallPairing('cursor');

function callId(p: JsonObject, event: CursorEvent, what: unknown): string {
  const conversation = String(p.conversation_id);
  const call = [p.generation_id ?? null, what ?? null];
  if (event === 'beforeReadFile' || event === 'afterFileEdit') return CALLS.fresh(conversation, call);
  return event.startsWith('before') ? CALLS.before(conversation, call) : CALLS.after(conversation, call);
}

/** MCP tool input arrives as a JSON string or an object. */
function mcpInput(value: unknown): JsonObject {
  if (isJsonObject(value)) return value;
  if (typeof value === 'string')
    try {
      const parsed = parseJson(Buffer.from(value));
      return isJsonObject(parsed) ? parsed : { value: parsed as never };
    } catch {
      return { raw: value };
    }
  return {};
}

function toolOf(event: CursorEvent, p: JsonObject): { tool: JsonObject; id: string } {
  if (event === 'beforeShellExecution' || event === 'afterShellExecution') {
    const command = text(p, 'command')!;
    return {
      tool: {
        origin: 'native',
        name: 'Shell',
        kind: 'shell',
        input: { command, ...(text(p, 'cwd', false) ? { cwd: p.cwd } : {}) },
      },
      id: callId(p, event, ['shell', command]),
    };
  }
  if (event === 'beforeMCPExecution' || event === 'afterMCPExecution') {
    const name = text(p, 'tool_name')!;
    const input = mcpInput(p.tool_input);
    const server = text(p, 'url', false) ?? text(p, 'command', false) ?? 'unreported';
    return {
      tool: {
        origin: 'mcp',
        name,
        input,
        mcp: {
          server: { id: server },
          toolName: name,
          provenance: 'inferred',
          connection: {
            transport: p.url ? 'http' : 'stdio',
            gaps: [{ path: 'command', reason: 'as reported by the harness' }],
          },
        },
      },
      id: callId(p, event, ['mcp', name, input]),
    };
  }
  const path = text(p, 'file_path')!;
  if (event === 'beforeReadFile')
    return {
      tool: { origin: 'native', name: 'Read', kind: 'file_read', input: { file_path: path } },
      id: callId(p, event, ['read', path]),
    };
  return {
    tool: { origin: 'native', name: 'Edit', kind: 'file_edit', input: { file_path: path } },
    id: callId(p, event, ['edit', path]),
  };
}

/** The directory a Cursor payload names: the call's own `cwd`, else the first workspace root. */
function cwdOf(p: JsonObject): string | undefined {
  const roots = Array.isArray(p.workspace_roots) ? p.workspace_roots : [];
  return text(p, 'cwd', false) ?? (typeof roots[0] === 'string' && roots[0] !== '' ? roots[0] : undefined);
}

/** Where a payload belongs without translating it: its conversation and directory. */
export function locateCursor(payload: unknown): { harnessSession: string; cwd: string } | undefined {
  if (!isJsonObject(payload)) return undefined;
  const session = text(payload, 'conversation_id', false);
  const cwd = cwdOf(payload);
  return session === undefined || cwd === undefined ? undefined : { harnessSession: session, cwd };
}

export function translateCursor(payload: unknown, id?: string): Captured {
  if (!isJsonObject(payload))
    throw new CaptureError('bad-payload', '/: a Cursor hook payload is a JSON object', { pointer: '' });
  const name = payload.hook_event_name;
  if (typeof name !== 'string' || !Object.hasOwn(CURSOR_EVENTS, name))
    throw new CaptureError(
      'unknown-event',
      `/hook_event_name: '${String(name)}' is not an event this channel translates`,
      {
        pointer: '/hook_event_name',
      },
    );
  const event = name as CursorEvent;
  const session = text(payload, 'conversation_id')!;
  const cwd = cwdOf(payload);
  const turn = text(payload, 'generation_id', false) ?? `turn-${session}`;
  const base: JsonObject = {
    ...(id ? { id } : {}),
    source: CURSOR_SOURCE,
    session: { id: session, ...(cwd ? { cwd } : {}), agent: { id: session, type: 'primary' } },
    extensions: { 'dev.tally.native': { harness: 'cursor', event } },
  };
  let out: JsonObject;
  if (event === 'beforeSubmitPrompt') {
    const prompt = typeof payload.prompt === 'string' ? payload.prompt : '';
    out = {
      ...base,
      type: 'turn.start',
      turn: { id: turn },
      trigger: 'user',
      items: textItems(`${turn}-prompt`, 'user', prompt, `${turn}-text`),
    };
  } else if (event === 'stop') {
    CALLS.forget(session); // the loop ended: a call stopped before it ran waits for nothing
    out = {
      ...base,
      type: 'turn.end',
      turn: { id: turn },
      outcome: text(payload, 'status', false) === 'error' ? 'error' : 'completed',
      continuationCount: 0,
      items: [],
    };
  } else {
    const { tool, id: call } = toolOf(event, payload);
    if (event.startsWith('before'))
      out = { ...base, type: 'tool.before', call: { id: call }, path: 'native', tool };
    else
      out = {
        ...base,
        type: 'tool.after',
        call: { id: call },
        path: 'native',
        tool,
        outcome: 'ok',
        execution: { status: 'executed' },
        items: [],
        gaps: [{ path: 'items', reason: 'the tool output is summarised, not recorded' }],
        ...(typeof payload.duration === 'number' && payload.duration >= 0
          ? { durationMs: payload.duration }
          : {}),
        ...(event === 'afterFileEdit'
          ? { fileChanges: [{ path: text(payload, 'file_path')!, change: 'modified' }] }
          : {}),
      };
  }
  return {
    mode: CURSOR_EVENTS[event],
    event: out,
    harnessSession: session,
    ...(cwd ? { cwd } : {}),
    agent: { instance: session },
    nativeEvent: event,
  };
}
