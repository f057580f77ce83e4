/**
 * Gemini CLI's hook payloads → canonical AHP events. Gemini's payloads have Claude Code's shape
 * (`session_id, transcript_path, cwd, hook_event_name` + `tool_name, tool_input, tool_response`,
 * `prompt`, `source`, `reason`) under other event names, so each is renamed to its Claude Code
 * counterpart and built by the same builders; the event keeps Gemini's own name. Gemini reports
 * no tool call id: each BeforeTool gets one of its own (a digest of the session, the tool, its input
 * and the BeforeTool's timestamp), and an AfterTool takes the id of the latest BeforeTool of the same
 * session, tool and input still waiting for one — so two identical calls in one session get two ids,
 * and a call denied before it ran (no AfterTool) leaves its id to no later call.
 *
 * Subagents (`invoke_agent`) report nothing of their own in these payloads; subagents.ts finds the
 * acting one from Gemini's own transcripts, and the event then names it as its agent.
 *
 * The per-model-turn events (BeforeModel, AfterModel, BeforeToolSelection) are not covered: they
 * carry the model request, not an action, and each would cost a hook process per turn.
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { CallPairing } from '../call-pairing.js';
import { type ClaudeCodeEvent, type ClaudeDialect, translateClaudeFamily } from '../claude-code/translate.js';
import { type Captured, CaptureError } from '../types.js';
import { GEMINI_SUBAGENTS, type GeminiAttribution } from './subagents.js';

export const GEMINI_CLI_SOURCE = 'urn:tally:gemini-cli';

/** Every native event this channel translates, whether it can still be stopped, and its Claude Code twin. */
export const GEMINI_CLI_EVENTS = {
  SessionStart: { mode: 'decide', as: 'SessionStart' },
  BeforeAgent: { mode: 'decide', as: 'UserPromptSubmit' },
  BeforeTool: { mode: 'decide', as: 'PreToolUse' },
  AfterTool: { mode: 'decide', as: 'PostToolUse' },
  AfterAgent: { mode: 'observe', as: 'Stop' },
  PreCompress: { mode: 'observe', as: 'PreCompact' },
  Notification: { mode: 'observe', as: 'Notification' },
  SessionEnd: { mode: 'observe', as: 'SessionEnd' },
} as const satisfies Record<string, { mode: 'decide' | 'observe'; as: ClaudeCodeEvent }>;
export type GeminiCliEvent = keyof typeof GEMINI_CLI_EVENTS;

/** AHP tool kinds for the tools Gemini CLI (and Qwen Code, its fork) ships. */
export const GEMINI_FAMILY_KINDS: Readonly<Record<string, string>> = {
  run_shell_command: 'shell',
  write_file: 'file_write',
  replace: 'file_edit',
  edit: 'file_edit',
  read_file: 'file_read',
  read_many_files: 'file_read',
  web_fetch: 'fetch',
};

/** Files a tool reports having changed: write_file / replace put `filePath` in `returnDisplay`. */
export function geminiFamilyFileChanges(payload: JsonObject): JsonObject[] {
  const response = payload.tool_response;
  if (!isJsonObject(response) || !isJsonObject(response.returnDisplay)) return [];
  const shown = response.returnDisplay;
  if (typeof shown.filePath !== 'string' || shown.filePath === '') return [];
  const created = shown.isNewFile === true || shown.originalContent === '' || shown.originalContent === null;
  return [{ path: shown.filePath, change: created ? 'created' : 'modified' }];
}

export const GEMINI_CLI_DIALECT: ClaudeDialect = {
  harness: 'gemini-cli',
  label: 'Gemini CLI',
  source: GEMINI_CLI_SOURCE,
  kinds: GEMINI_FAMILY_KINDS,
  fileChanges: geminiFamilyFileChanges,
  directories: { run_shell_command: 'dir_path' },
};

/** The ids both halves of one tool call get: Gemini reports none (see the module comment). */
const CALLS = new CallPairing('gemini');

function callId(payload: JsonObject, before: boolean): string {
  const session = String(payload.session_id);
  const call = [payload.tool_name, payload.tool_input ?? null];
  if (!before) return CALLS.after(session, call);
  return CALLS.before(session, call, typeof payload.timestamp === 'string' ? payload.timestamp : '');
}

/** The subagent (or session model) the tracker found, applied to a translated event. */
function attribute(captured: Captured, found: GeminiAttribution): Captured {
  const session = captured.event.session as JsonObject;
  if (found.child !== undefined) {
    captured.agent = found.child;
    session.agent = { id: found.child.instance, type: found.child.type ?? 'subagent' };
  }
  if (found.model !== undefined) {
    session.model = found.model;
    captured.agent.model = found.model;
  }
  const ext = (captured.event.extensions as JsonObject)['dev.tally.native'] as JsonObject;
  if (found.spawned !== undefined) ext.spawned = found.spawned;
  if (found.candidates !== undefined) ext.subagent_candidates = found.candidates;
  return captured;
}

export function translateGeminiCli(payload: unknown, id?: string): Captured {
  if (!isJsonObject(payload))
    throw new CaptureError('bad-payload', '/: a Gemini CLI hook payload is a JSON object', { pointer: '' });
  const name = payload.hook_event_name;
  if (typeof name !== 'string' || !Object.hasOwn(GEMINI_CLI_EVENTS, name))
    throw new CaptureError(
      'unknown-event',
      `/hook_event_name: '${String(name)}' is not an event this channel translates`,
      { pointer: '/hook_event_name' },
    );
  const spec = GEMINI_CLI_EVENTS[name as GeminiCliEvent];
  const twin: JsonObject = { ...payload, hook_event_name: spec.as };
  if (spec.as === 'PreToolUse' || spec.as === 'PostToolUse') {
    if (typeof payload.tool_name !== 'string' || payload.tool_name === '')
      throw new CaptureError('bad-payload', '/tool_name: the hook payload needs a non-empty string here', {
        pointer: '/tool_name',
      });
    const call = callId(payload, spec.as === 'PreToolUse');
    twin.tool_use_id = call;
    const captured = translateClaudeFamily(twin, GEMINI_CLI_DIALECT, id, { [spec.as]: spec.mode }, name);
    return attribute(captured, GEMINI_SUBAGENTS.attributeTool(payload, call));
  }
  const captured = translateClaudeFamily(twin, GEMINI_CLI_DIALECT, id, { [spec.as]: spec.mode }, name);
  if (name === 'SessionEnd') {
    GEMINI_SUBAGENTS.forget(captured.harnessSession);
    CALLS.forget(captured.harnessSession);
  }
  return captured;
}
