/**
 * Which Gemini CLI agent a hook event came from. The pinned Gemini CLI runs a subagent through its
 * `invoke_agent` tool ({agent_name, prompt}); the subagent's own tool calls fire BeforeTool and
 * AfterTool with the parent's `session_id` and `transcript_path` and no field naming the subagent
 * (test/agents/README.md). What does name it is Gemini's own record: every subagent gets a
 * transcript beside the session's, `<chats>/<session_id>/<agent id>.jsonl`, whose first line is
 * `{sessionId: <agent id>, kind: "subagent", startTime}`, whose first user message is its task and
 * whose model turns name their `model`.
 *
 * So a tool event belongs to a subagent when an `invoke_agent` call of its session is open (its
 * BeforeTool seen, its AfterTool not yet) and that call's transcript had started by the event's own
 * timestamp. This rests on what the pinned version does: a subagent cannot invoke subagents; the
 * BeforeTool hooks of one parent turn all fire before any of its calls runs, so none fires while a
 * subagent of that turn works; a subagent's transcript exists before its first model request. An
 * AfterTool takes the attribution its BeforeTool got. Two subagents running at once (two
 * `invoke_agent` calls in one turn) cannot be told apart call by call: such an event stays the
 * session's own and names the candidates.
 */
import { closeSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { openRegularSync, READ_NOFOLLOW, readUpTo } from '../../core/regular-file.js';
import { jsonLine } from '../json-line.js';
import type { HarnessAgent } from '../types.js';

export const INVOKE_AGENT = 'invoke_agent';

/** How much of a transcript's head (a subagent's) or tail (the session's) is read. */
const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 64 * 1024;

interface ChildTranscript {
  id: string;
  path: string;
  startTime: number;
  /** Its first user message: the task it was given. */
  task: string;
  model?: string;
}

interface Delegation {
  key: string;
  agentName: string;
  prompt: string;
  since: number;
  child?: ChildTranscript;
}

/** What the adapter adds to a translated event. */
export interface GeminiAttribution {
  /** The subagent that acted, when it was one. */
  child?: HarnessAgent;
  /** The model the acting agent's transcript names. */
  model?: string;
  /** On the parent's AfterTool(invoke_agent): the subagent that call ran. */
  spawned?: JsonObject;
  /** Subagents running at once, any of which may have acted. */
  candidates?: string[];
}

interface SessionState {
  delegations: Delegation[];
  calls: Map<string, GeminiAttribution>;
  finished: Set<string>;
  children: Map<string, ChildTranscript>;
}

/** The first or last `bytes` of a regular file (anything else, a FIFO or a device, is not read). */
function readSlice(path: string, fromEnd: boolean, bytes: number): string | undefined {
  let fd: number | undefined;
  try {
    const opened = openRegularSync(path, READ_NOFOLLOW);
    fd = opened.fd;
    const length = Math.min(bytes, opened.size);
    return readUpTo(fd, length, fromEnd ? opened.size - length : 0).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function userText(line: JsonObject): string | undefined {
  if (line.type !== 'user' || !Array.isArray(line.content)) return undefined;
  const texts = line.content.flatMap((part) =>
    isJsonObject(part) && typeof part.text === 'string' ? [part.text] : [],
  );
  return texts.length > 0 ? texts.join('\n') : undefined;
}

function modelOf(line: JsonObject): string | undefined {
  return line.type === 'gemini' && typeof line.model === 'string' && line.model !== ''
    ? line.model
    : undefined;
}

/** A subagent transcript's header, task and first model; null when the file is not one. */
function readChild(path: string): ChildTranscript | null {
  const head = readSlice(path, false, HEAD_BYTES);
  if (head === undefined) return null;
  const lines = head.split('\n');
  const header = jsonLine(lines[0] ?? '');
  if (header?.kind !== 'subagent' || typeof header.sessionId !== 'string') return null;
  const startTime = Date.parse(String(header.startTime));
  if (Number.isNaN(startTime)) return null;
  const child: ChildTranscript = { id: header.sessionId, path, startTime, task: '' };
  // The last line may be cut by the slice: only whole lines are read.
  for (const raw of lines.slice(1, -1)) {
    const line = jsonLine(raw);
    if (line === undefined) continue;
    child.task ||= userText(line) ?? '';
    child.model ??= modelOf(line);
    if (child.task !== '' && child.model !== undefined) break;
  }
  return child;
}

/** The model of the session's latest model turn, from its transcript's tail. */
function latestModel(transcript: string): string | undefined {
  const tail = readSlice(transcript, true, TAIL_BYTES);
  if (tail === undefined) return undefined;
  const lines = tail.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.includes('"gemini"')) continue;
    const model = modelOf(jsonLine(line) ?? {});
    if (model !== undefined) return model;
  }
  return undefined;
}

function timeOf(payload: JsonObject): number {
  const t = typeof payload.timestamp === 'string' ? Date.parse(payload.timestamp) : Number.NaN;
  return Number.isNaN(t) ? Date.now() : t;
}

/** The subagents of every Gemini CLI session the recorder serves, as their hooks reveal them. */
export class GeminiSubagents {
  private readonly sessions = new Map<string, SessionState>();

  /** Attribution for one tool event (`key` pairs its BeforeTool and AfterTool). */
  attributeTool(payload: JsonObject, key: string): GeminiAttribution {
    const session = String(payload.session_id);
    const state = this.state(session);
    const before = payload.hook_event_name === 'BeforeTool';
    if (payload.tool_name === INVOKE_AGENT)
      return before ? this.delegate(state, payload, key) : this.end(state, payload, key);
    if (!before) {
      const known = state.calls.get(key);
      if (known !== undefined) {
        state.calls.delete(key);
        return known;
      }
    }
    const found = this.acting(state, payload);
    if (before) state.calls.set(key, found);
    return found;
  }

  /** A session ended: its state goes. */
  forget(session: string): void {
    this.sessions.delete(session);
  }

  private state(session: string): SessionState {
    let state = this.sessions.get(session);
    if (state === undefined) {
      state = { delegations: [], calls: new Map(), finished: new Set(), children: new Map() };
      this.sessions.set(session, state);
    }
    return state;
  }

  private parentModel(payload: JsonObject): GeminiAttribution {
    const transcript = typeof payload.transcript_path === 'string' ? payload.transcript_path : '';
    const model = transcript === '' ? undefined : latestModel(transcript);
    return model === undefined ? {} : { model };
  }

  private delegate(state: SessionState, payload: JsonObject, key: string): GeminiAttribution {
    const input = isJsonObject(payload.tool_input) ? payload.tool_input : {};
    state.delegations.push({
      key,
      agentName:
        typeof input.agent_name === 'string' && input.agent_name !== '' ? input.agent_name : 'subagent',
      prompt: typeof input.prompt === 'string' ? input.prompt : '',
      since: timeOf(payload),
    });
    return this.parentModel(payload);
  }

  /** The invoke_agent call ended: its subagent is done (a denied call's duplicates with it). */
  private end(state: SessionState, payload: JsonObject, key: string): GeminiAttribution {
    this.bind(state, payload, timeOf(payload));
    const ended = state.delegations.filter((d) => d.key === key);
    state.delegations = state.delegations.filter((d) => d.key !== key);
    const ran = ended.find((d) => d.child !== undefined);
    for (const d of ended) if (d.child) state.finished.add(d.child.id);
    const out = this.parentModel(payload);
    if (ran?.child) out.spawned = { agent_id: ran.child.id, agent_name: ran.agentName };
    return out;
  }

  /** The agent acting at this (non-invoke_agent) tool event. */
  private acting(state: SessionState, payload: JsonObject): GeminiAttribution {
    if (state.delegations.length === 0) return this.parentModel(payload);
    const running = this.bind(state, payload, timeOf(payload));
    if (running.length === 0) return this.parentModel(payload);
    if (running.length > 1)
      return { ...this.parentModel(payload), candidates: running.map((d) => d.child!.id).sort() };
    const d = running[0]!;
    const child = d.child!;
    child.model ??= readChild(child.path)?.model;
    return {
      child: {
        instance: child.id,
        type: d.agentName,
        parent: String(payload.session_id),
        ...(child.model ? { model: child.model } : {}),
      },
      ...(child.model ? { model: child.model } : {}),
    };
  }

  /**
   * Binds each open delegation to the subagent transcript it started (by its task, else the
   * earliest open call before it) and answers the delegations whose subagent had started by `t`.
   */
  private bind(state: SessionState, payload: JsonObject, t: number): Delegation[] {
    if (state.delegations.some((d) => d.child === undefined)) {
      const transcript = typeof payload.transcript_path === 'string' ? payload.transcript_path : '';
      const dir = join(dirname(transcript), String(payload.session_id));
      const bound = new Set(state.delegations.flatMap((d) => (d.child ? [d.child.id] : [])));
      for (const child of this.children(state, dir)) {
        if (child.startTime > t || state.finished.has(child.id) || bound.has(child.id)) continue;
        const open = state.delegations.filter((d) => d.child === undefined && d.since <= child.startTime);
        const byTask = open.find((d) => d.prompt !== '' && child.task.includes(d.prompt));
        // A task no open call's prompt is part of (an agent that rewords its input) goes to the earliest.
        const someTask = state.delegations.some((d) => d.prompt !== '' && child.task.includes(d.prompt));
        const chosen = byTask ?? (someTask ? undefined : open[0]);
        if (chosen === undefined) continue;
        chosen.child = child;
        bound.add(child.id);
      }
    }
    return state.delegations.filter((d) => d.child !== undefined && d.child.startTime <= t);
  }

  /** The subagent transcripts in a session's folder, oldest first (headers read once). */
  private children(state: SessionState, dir: string): ChildTranscript[] {
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
    } catch {
      return [];
    }
    const out: ChildTranscript[] = [];
    for (const name of names) {
      // A file caught before its first line is whole is read again next time.
      const child = state.children.get(name) ?? readChild(join(dir, name));
      if (child === null) continue;
      state.children.set(name, child);
      out.push(child);
    }
    return out.sort((a, b) => a.startTime - b.startTime);
  }
}

/** The one tracker the Gemini CLI adapter uses (the recorder is one process). */
export const GEMINI_SUBAGENTS = new GeminiSubagents();
