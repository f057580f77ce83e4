/**
 * OpenCode's plugin hooks → canonical AHP events. OpenCode has no settings-file hooks; Tally's
 * plugin (./plugin.ts) posts each hook's own arguments as they are — `{hook_event_name,
 * session_id, cwd, input, output}` for `tool.execute.before` / `tool.execute.after` /
 * `chat.message`, `{hook_event_name: "event.<type>", session_id, cwd, event}` for the session
 * events it forwards, each with OpenCode's info of its session (`session`; ./agent.ts). The fields
 * are OpenCode's (test/agents/README.md): `input {tool, sessionID, callID}`, `output {args}` before
 * a tool, `input.args` and `output {title, output, metadata}` after it. A subagent's session start
 * and end are its `dev.tally.agent.start` / `stop`; the `task` call that ran it names it.
 */
import { capabilityManifest } from '../../ahp/protocol/capabilities.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { TALLY_VERSION } from '../../core/version.js';
import { applyCallDirectory } from '../call-directory.js';
import { MODEL_EXTENSION } from '../codex/translate.js';
import { textItems } from '../items.js';
import { inferredMcp } from '../mcp-tool.js';
import { type Captured, CaptureError } from '../types.js';
import { actorOf } from './agent.js';

export const OPENCODE_SOURCE = 'urn:tally:opencode';

/** What the plugin forwards, and whether it can still be stopped. */
export const OPENCODE_EVENTS = {
  'event.session.created': 'observe',
  'chat.message': 'observe',
  'tool.execute.before': 'decide',
  'tool.execute.after': 'observe',
  'event.session.idle': 'observe',
} as const;
export type OpenCodeEvent = keyof typeof OPENCODE_EVENTS;

const KINDS: Record<string, string> = {
  bash: 'shell',
  write: 'file_write',
  edit: 'file_edit',
  patch: 'file_edit',
  // Offered instead of edit and write when the model is a GPT-5-class one.
  apply_patch: 'file_edit',
  read: 'file_read',
  webfetch: 'fetch',
};

function fail(pointer: string, message: string): never {
  throw new CaptureError('bad-payload', `${pointer}: ${message}`, { pointer });
}

function field(value: JsonObject, name: string, at: string): string {
  const v = value[name];
  if (typeof v !== 'string' || v === '')
    fail(`${at}/${name}`, 'the plugin payload needs a non-empty string here');
  return v;
}

function object(value: JsonObject, name: string): JsonObject {
  const v = value[name];
  if (!isJsonObject(v)) fail(`/${name}`, 'the plugin payload needs an object here');
  return v;
}

function native(event: string, extra: JsonObject = {}): JsonObject {
  return { 'dev.tally.native': { harness: 'opencode', event, ...extra } };
}

function toolOf(input: JsonObject, args: unknown): JsonObject {
  const name = field(input, 'tool', '/input');
  const toolInput = isJsonObject(args) ? args : {};
  // OpenCode names an MCP server's tool `<server>_<tool>`; its own tools have no underscore.
  const cut = name.indexOf('_');
  if (cut > 0 && cut < name.length - 1 && !KINDS[name])
    return {
      origin: 'mcp',
      name,
      mcp: inferredMcp(name.slice(0, cut), name.slice(cut + 1)),
      input: toolInput,
    };
  return { origin: 'native', name, ...(KINDS[name] ? { kind: KINDS[name] } : {}), input: toolInput };
}

/** The subagent a `task` call ran, as its result's metadata names it. */
function spawned(input: JsonObject, metadata: JsonObject): JsonObject | undefined {
  if (input.tool !== 'task' || typeof metadata.sessionId !== 'string' || metadata.sessionId === '')
    return undefined;
  const args = isJsonObject(input.args) ? input.args : {};
  return {
    agent_id: metadata.sessionId,
    ...(typeof args.subagent_type === 'string' ? { agent_name: args.subagent_type } : {}),
  };
}

function promptText(output: JsonObject): string {
  const parts = Array.isArray(output.parts) ? output.parts : [];
  return parts
    .filter((p): p is JsonObject => isJsonObject(p) && p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n');
}

export function translateOpenCode(payload: unknown, id?: string): Captured {
  if (!isJsonObject(payload))
    throw new CaptureError('bad-payload', '/: an OpenCode plugin payload is a JSON object', { pointer: '' });
  const name = payload.hook_event_name;
  if (typeof name !== 'string' || !Object.hasOwn(OPENCODE_EVENTS, name))
    throw new CaptureError(
      'unknown-event',
      `/hook_event_name: '${String(name)}' is not an event this channel translates`,
      { pointer: '/hook_event_name' },
    );
  const nativeEvent = name as OpenCodeEvent;
  const sessionId = field(payload, 'session_id', '');
  const cwd = typeof payload.cwd === 'string' && payload.cwd !== '' ? payload.cwd : undefined;
  const actor = actorOf(payload, sessionId);
  const { agent } = actor;
  const base: JsonObject = {
    ...(id ? { id } : {}),
    source: OPENCODE_SOURCE,
    session: {
      id: sessionId,
      ...(cwd ? { cwd } : {}),
      agent: { id: agent.instance, type: agent.type ?? 'primary' },
      ...(agent.model ? { model: agent.model } : {}),
    },
  };
  const subagent = agent.parent !== undefined;
  let event: JsonObject;
  if (nativeEvent === 'event.session.created' && subagent)
    event = { ...base, type: 'dev.tally.agent.start', extensions: native(name) };
  else if (nativeEvent === 'event.session.idle' && subagent)
    event = { ...base, type: 'dev.tally.agent.stop', extensions: native(name) };
  else if (nativeEvent === 'event.session.created')
    event = {
      ...base,
      type: 'session.start',
      trigger: 'startup',
      harness: { name: 'opencode', version: 'unreported' },
      permissionMode: 'default',
      manifest: capabilityManifest(),
      items: [],
      extensions: native(name, { adapter: `tally ${TALLY_VERSION}` }),
    };
  else if (nativeEvent === 'chat.message') {
    const output = object(payload, 'output');
    const message = isJsonObject(output.message) ? output.message : {};
    const turn = typeof message.id === 'string' && message.id !== '' ? message.id : `turn-${agent.instance}`;
    event = {
      ...base,
      type: 'turn.start',
      turn: { id: turn },
      trigger: 'user',
      items: textItems(`${turn}-prompt`, 'user', promptText(output), `${turn}-text`),
      extensions: native(name),
    };
  } else if (nativeEvent === 'tool.execute.before') {
    const input = object(payload, 'input');
    const output = object(payload, 'output');
    event = {
      ...base,
      type: 'tool.before',
      call: { id: field(input, 'callID', '/input') },
      path: 'native',
      tool: toolOf(input, output.args),
      extensions: native(name),
    };
  } else if (nativeEvent === 'tool.execute.after') {
    const input = object(payload, 'input');
    const output = isJsonObject(payload.output) ? payload.output : {};
    const metadata = isJsonObject(output.metadata) ? output.metadata : {};
    const failed = typeof metadata.exit === 'number' && metadata.exit !== 0;
    const child = spawned(input, metadata);
    event = {
      ...base,
      type: 'tool.after',
      call: { id: field(input, 'callID', '/input') },
      path: 'native',
      tool: toolOf(input, input.args),
      outcome: failed ? 'error' : 'ok',
      execution: { status: 'executed' },
      items: [],
      gaps: [{ path: 'items', reason: 'the tool output is summarised, not recorded' }],
      ...(failed ? { error: { message: `exit code ${String(metadata.exit)}`, class: 'tool' } } : {}),
      extensions: native(name, {
        response: {
          ...(typeof output.output === 'string' ? { text_bytes: Buffer.byteLength(output.output) } : {}),
          ...(typeof metadata.exit === 'number' ? { exit: metadata.exit } : {}),
        },
        ...(child ? { spawned: child } : {}),
      }),
    };
  } else
    event = {
      ...base,
      type: 'turn.end',
      turn: { id: `turn-${agent.instance}` },
      outcome: 'completed',
      continuationCount: 0,
      items: [],
      extensions: native(name),
    };
  // `bash {workdir}` runs the command there (resolved against the session's directory).
  if (event.tool !== undefined) applyCallDirectory(event, { bash: 'workdir' });
  // The provider of the acting agent's model, where the agent graph reads it (as for Codex).
  if (actor.provider !== undefined)
    (event.extensions as JsonObject)[MODEL_EXTENSION] = { provider: actor.provider };
  return {
    mode: OPENCODE_EVENTS[nativeEvent],
    event,
    harnessSession: actor.harnessSession,
    ...(cwd ? { cwd } : {}),
    agent,
    nativeEvent,
  };
}
