/**
 * The model each agent of a session last ran on, as the harness wrote it in its transcript (JSON
 * lines; test/agents/README.md says which line names it for Claude Code and Qwen Code). A file is
 * read as it grows: each look reads only what was appended since the previous one, at most WINDOW
 * bytes (the newest; a longer run of new lines loses its oldest), so a hook costs the lines written
 * since the last hook, never the whole transcript. What a transcript says is the harness's report,
 * in a file the agent can write (docs/security.md: who acted, and on which model, only reports).
 */

import { lstatSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { identityOf, readFileSlice } from './harness-files.js';

/** The model a transcript line reports, and for which agent (`''`: the session's own agent). */
export type ModelLine = (line: JsonObject) => { agent: string; model: string } | undefined;

const WINDOW = 256 * 1024;
const KEPT_FILES = 256;
const KEPT_AGENTS = 256;
/** A model name as a report may carry it: printable ASCII, not `<synthetic>`-like. */
const NAME = /^[\x21-\x3b\x3d-\x7e][\x20-\x7e]{0,199}$/;

export function reportedName(value: unknown): string | undefined {
  return typeof value === 'string' && NAME.test(value) ? value : undefined;
}

interface FileState {
  identity: string;
  /** Where the next unread line starts. */
  offset: number;
  models: Map<string, string>;
}

export class TranscriptModels {
  private readonly files = new Map<string, FileState>();

  constructor(private readonly lineModel: ModelLine) {}

  /** The latest model the transcript at `path` reports for `agent` (`''`: the session's own). */
  latest(path: string, agent = ''): string | undefined {
    return this.advance(path)?.models.get(agent);
  }

  private advance(path: string): FileState | undefined {
    let state = this.files.get(path);
    // Most hooks find the transcript as the last one left it, or not there yet: a status that
    // throws nothing says so without opening it (a failed open costs an error object, and every
    // hook of a session comes here).
    const stat = isAbsolute(path) ? lstatSync(path, { throwIfNoEntry: false }) : undefined;
    if (stat === undefined || !stat.isFile()) return state;
    if (state !== undefined && stat.size === state.offset && identityOf(stat) === state.identity)
      return state;
    let slice = readFileSlice(path, state?.offset ?? 0, WINDOW);
    if (slice === undefined) return state;
    if (state !== undefined && (state.identity !== slice.identity || slice.size < state.offset)) {
      // Another file under that name, or this one cut back: read it afresh.
      state = undefined;
      slice = readFileSlice(path, 0, WINDOW);
      if (slice === undefined) return undefined;
    }
    if (state === undefined) {
      state = { identity: slice.identity, offset: 0, models: new Map() };
      this.files.delete(path);
      if (this.files.size >= KEPT_FILES) this.files.delete(this.files.keys().next().value as string);
    }
    this.files.delete(path);
    this.files.set(path, state);
    const end = slice.bytes.lastIndexOf(0x0a);
    if (end < 0) return state;
    // A slice that skipped bytes starts inside a line: that line is not read.
    const first = slice.start > state.offset ? slice.bytes.indexOf(0x0a) + 1 : 0;
    for (const text of slice.bytes.subarray(first, end).toString('utf8').split('\n'))
      if (text.includes('"model"')) this.take(state, text);
    state.offset = slice.start + end + 1;
    return state;
  }

  private take(state: FileState, text: string): void {
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      return;
    }
    if (!isJsonObject(line)) return;
    const found = this.lineModel(line);
    if (found === undefined) return;
    if (!state.models.has(found.agent) && state.models.size >= KEPT_AGENTS)
      state.models.delete(state.models.keys().next().value as string);
    state.models.delete(found.agent);
    state.models.set(found.agent, found.model);
  }
}

/**
 * Claude Code: an `assistant` line's `message.model` (the model the API answered with); a
 * subagent's lines, in its own transcript, carry `isSidechain` and its `agentId`.
 */
export const claudeCodeModelLine: ModelLine = (line) => {
  if (line.type !== 'assistant' || !isJsonObject(line.message)) return undefined;
  const model = reportedName(line.message.model);
  if (model === undefined) return undefined;
  const agent = line.isSidechain === true && typeof line.agentId === 'string' ? line.agentId : '';
  return { agent, model };
};

/** A Qwen Code prompt id: `<session>########<n>` for the session's agent, `<session>#<agent id>#<n>`. */
function qwenPromptAgent(promptId: unknown): string | undefined {
  if (typeof promptId !== 'string') return undefined;
  const first = promptId.indexOf('#');
  const last = promptId.lastIndexOf('#');
  if (first < 0 || last === first) return undefined;
  const middle = promptId.slice(first + 1, last);
  if (/^#*$/.test(middle)) return '';
  return middle.includes('#') ? undefined : middle;
}

/**
 * Qwen Code: the session's transcript records every model response of every agent as a
 * `ui_telemetry` line (`qwen-code.api_response`: `model`, and the `prompt_id` that names the agent);
 * its own `assistant` lines carry `model` too. A subagent's transcript names none. Qwen names no
 * provider: the line's `auth_type` (`openai`, `qwen-oauth`, …) is the kind of API it signs in to, not
 * who serves the model behind it, so it is not taken for one.
 */
export const qwenCodeModelLine: ModelLine = (line) => {
  if (line.type === 'assistant' && line.isSidechain !== true) {
    const model = reportedName(line.model);
    return model === undefined ? undefined : { agent: '', model };
  }
  if (line.type !== 'system' || line.subtype !== 'ui_telemetry' || !isJsonObject(line.systemPayload))
    return undefined;
  const ui = line.systemPayload.uiEvent;
  if (!isJsonObject(ui) || ui['event.name'] !== 'qwen-code.api_response') return undefined;
  const model = reportedName(ui.model);
  const agent = qwenPromptAgent(ui.prompt_id);
  return model === undefined || agent === undefined ? undefined : { agent, model };
};
