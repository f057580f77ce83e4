/**
 * Which agent of a Claude Code or Qwen Code session acted, which agent spawned it, and the model it
 * ran on — from what the harness reports (test/agents/README.md). A subagent's hooks carry the
 * session's `session_id` with its own `agent_id`, and nothing naming the agent that spawned it; a
 * subagent can spawn subagents of its own. What does name the spawner:
 *
 * - the spawn call itself: the spawning agent's PreToolUse of the spawn tool (Claude Code `Agent`,
 *   Qwen Code `agent`), and, for Claude Code, its PostToolUse, whose `tool_response.agentId` is the
 *   subagent it ran;
 * - the harness's own record of the subagent, `agent-<agent_id>.meta.json` beside the session's
 *   transcript: `toolUseId` (the spawn call) and `parentAgentId` (absent or null under the session's
 *   own agent). Qwen writes it before SubagentStart; Claude Code only after, by the subagent's first
 *   tool call.
 *
 * So a subagent's parent is the spawner of the call its `.meta.json` names (else the
 * `parentAgentId` it names), or the spawner of the spawn call whose result named it; until one of
 * these exists, the spawner of the latest spawn call not yet matched to a subagent (hooks fire in
 * order: a spawn's PreToolUse, then its subagent's SubagentStart). The event says which in
 * `extensions["dev.tally.native"].parent_from`. A subagent's type, when its payload leaves it out
 * (Qwen's tool events), is the one its SubagentStart or `.meta.json` gave, so one instance carries
 * one name. All of it is the harness's report in files the agent can write (docs/security.md).
 */
import { basename, dirname, join } from 'node:path';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import type { Captured } from '../types.js';
import { readFileSlice } from './harness-files.js';
import { reportedName, type TranscriptModels } from './models.js';

/** How one harness of the family reports its subagents and models. */
export interface AgentReports {
  /** The tools that spawn a subagent. */
  spawnTools: readonly string[];
  /** The `.meta.json` of subagent `agent` of the session whose transcript is `transcript`. */
  metaPath(transcript: string, agent: string): string | undefined;
  /** The transcript naming the model of `agent` (undefined: the session's own) and its key there. */
  modelSource(transcript: string, agent: string | undefined): { path: string; agent: string } | undefined;
  models: TranscriptModels;
}

/** How the adapter learned a subagent's parent. */
export type ParentSource = 'subagent-meta' | 'spawn-result' | 'spawn-order' | 'session';

interface Spawn {
  spawner: string;
  /** The subagent type the call asked for, when it named one. */
  type?: string;
  /** The subagent matched to this call. */
  child?: string;
}

interface Subagent {
  parent: string;
  from: ParentSource;
  type?: string;
}

interface SessionState {
  /** Spawn calls by every id they carry (`tool_use_id`, Qwen's `tool_call_id`). */
  spawns: Map<string, Spawn>;
  /** Spawn calls whose PreToolUse came and whose PostToolUse has not, oldest first. */
  open: Spawn[];
  agents: Map<string, Subagent>;
}

const KEPT_SESSIONS = 256;
const KEPT_PER_SESSION = 1024;
const META_LIMIT = 64 * 1024;
/** An agent id that may name a file: no separator, no leading dot. */
const AGENT_FILE_ID = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function sure(from: ParentSource): boolean {
  return from === 'subagent-meta' || from === 'spawn-result';
}

function bounded<K, V>(map: Map<K, V>, key: K, value: V, limit = KEPT_PER_SESSION): void {
  map.delete(key);
  if (map.size >= limit) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

function readMeta(path: string, agent: string): JsonObject | undefined {
  const slice = readFileSlice(path, 0, META_LIMIT);
  if (slice === undefined || slice.size > META_LIMIT) return undefined;
  let meta: unknown;
  try {
    meta = JSON.parse(slice.bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isJsonObject(meta) || (meta.agentId !== undefined && meta.agentId !== agent)) return undefined;
  return meta;
}

/** Claude Code: `<session>.jsonl` with `<session>/subagents/agent-<id>.{jsonl,meta.json}` beside it. */
export function claudeSubagentFile(transcript: string, agent: string, suffix: string): string | undefined {
  if (!transcript.endsWith('.jsonl') || !AGENT_FILE_ID.test(agent)) return undefined;
  return join(transcript.slice(0, -'.jsonl'.length), 'subagents', `agent-${agent}${suffix}`);
}

/** Qwen Code: `<project>/chats/<session>.jsonl` and `<project>/subagents/<session>/agent-<id>.meta.json`. */
export function qwenSubagentMeta(transcript: string, agent: string): string | undefined {
  const chats = dirname(transcript);
  if (basename(chats) !== 'chats' || !transcript.endsWith('.jsonl') || !AGENT_FILE_ID.test(agent))
    return undefined;
  const session = basename(transcript, '.jsonl');
  return join(dirname(chats), 'subagents', session, `agent-${agent}.meta.json`);
}

export class ClaudeFamilyAgents {
  private readonly sessions = new Map<string, SessionState>();

  constructor(private readonly reports: AgentReports) {}

  /** Puts the acting agent's parent, type and model into a translated event. */
  attribute(captured: Captured, payload: JsonObject): Captured {
    const state = this.state(captured.harnessSession);
    const tool = text(payload.tool_name);
    if (tool !== undefined && this.reports.spawnTools.includes(tool)) {
      const event = payload.hook_event_name;
      if (event === 'PreToolUse') this.opened(state, payload, captured.agent.instance);
      else if (event === 'PostToolUse' || event === 'PostToolUseFailure')
        this.closed(state, payload, captured.agent.instance);
    }
    if (captured.agent.parent !== undefined) this.placeSubagent(state, captured, payload);
    this.addModel(captured, payload);
    if (payload.hook_event_name === 'SessionEnd') this.sessions.delete(captured.harnessSession);
    return captured;
  }

  private state(session: string): SessionState {
    let state = this.sessions.get(session);
    if (state === undefined) {
      state = { spawns: new Map(), open: [], agents: new Map() };
      bounded(this.sessions, session, state, KEPT_SESSIONS);
    }
    return state;
  }

  private opened(state: SessionState, payload: JsonObject, spawner: string): void {
    const input = isJsonObject(payload.tool_input) ? payload.tool_input : {};
    const type = text(input.subagent_type);
    const spawn: Spawn = { spawner, ...(type ? { type } : {}) };
    for (const id of [text(payload.tool_use_id), text(payload.tool_call_id)])
      if (id !== undefined) bounded(state.spawns, id, spawn);
    state.open.push(spawn);
    if (state.open.length > KEPT_PER_SESSION) state.open.shift();
  }

  /** A spawn call ended; a result naming the subagent it ran (Claude Code's `agentId`) is kept. */
  private closed(state: SessionState, payload: JsonObject, spawner: string): void {
    const spawn =
      state.spawns.get(text(payload.tool_use_id) ?? '') ?? state.spawns.get(text(payload.tool_call_id) ?? '');
    if (spawn !== undefined) state.open = state.open.filter((s) => s !== spawn);
    const response = isJsonObject(payload.tool_response) ? payload.tool_response : {};
    const child = text(response.agentId);
    if (child === undefined || child === spawner) return;
    const known = state.agents.get(child);
    if (known !== undefined && sure(known.from)) return;
    const type = known?.type ?? text(response.agentType);
    bounded(state.agents, child, { parent: spawner, from: 'spawn-result', ...(type ? { type } : {}) });
    if (spawn !== undefined) spawn.child = child;
  }

  private placeSubagent(state: SessionState, captured: Captured, payload: JsonObject): void {
    const id = captured.agent.instance;
    let known = state.agents.get(id);
    if (known === undefined || !sure(known.from)) known = this.fromMeta(state, payload, id) ?? known;
    known ??= this.byOrder(state, id, captured.agent.type, captured.harnessSession);
    if (known.parent === id) known = { parent: captured.harnessSession, from: 'session' };
    if (captured.agent.type !== undefined) known.type = captured.agent.type;
    bounded(state.agents, id, known);
    const type = known.type;
    captured.agent = { ...captured.agent, parent: known.parent, ...(type ? { type } : {}) };
    const event = captured.event;
    (event.session as JsonObject).agent = { id, type: type ?? 'subagent' };
    ((event.extensions as JsonObject)['dev.tally.native'] as JsonObject).parent_from = known.from;
  }

  /** The parent the subagent's `.meta.json` names (through its spawn call when that was seen). */
  private fromMeta(state: SessionState, payload: JsonObject, id: string): Subagent | undefined {
    const transcript = text(payload.transcript_path);
    const path = transcript === undefined ? undefined : this.reports.metaPath(transcript, id);
    const meta = path === undefined ? undefined : readMeta(path, id);
    if (meta === undefined) return undefined;
    const call = text(meta.toolUseId);
    const spawn = call === undefined ? undefined : state.spawns.get(call);
    const parent = spawn?.spawner ?? text(meta.parentAgentId) ?? String(payload.session_id);
    // A guess made before the file existed gives its spawn call back.
    for (const s of state.open) if (s.child === id && s !== spawn) delete s.child;
    if (spawn !== undefined) spawn.child = id;
    const type = state.agents.get(id)?.type ?? text(meta.agentType);
    return { parent, from: 'subagent-meta', ...(type ? { type } : {}) };
  }

  /** The spawner of the latest open spawn call no subagent was matched to (of its type, if named). */
  private byOrder(state: SessionState, id: string, type: string | undefined, session: string): Subagent {
    for (let i = state.open.length - 1; i >= 0; i--) {
      const spawn = state.open[i]!;
      if (spawn.child !== undefined || (type && spawn.type && spawn.type !== type)) continue;
      spawn.child = id;
      return { parent: spawn.spawner, from: 'spawn-order' };
    }
    return { parent: session, from: 'session' };
  }

  /**
   * The acting agent's model: a payload's own `model` (Qwen's SessionStart), else its transcript's.
   * Neither harness names a provider.
   */
  private addModel(captured: Captured, payload: JsonObject): void {
    const subagent = captured.agent.parent === undefined ? undefined : captured.agent.instance;
    let model = subagent === undefined ? reportedName(payload.model) : undefined;
    if (model === undefined) {
      const transcript = text(payload.transcript_path);
      const source = transcript === undefined ? undefined : this.reports.modelSource(transcript, subagent);
      if (source !== undefined) model = this.reports.models.latest(source.path, source.agent);
    }
    if (model === undefined) return;
    (captured.event.session as JsonObject).model = model;
    captured.agent.model = model;
  }
}
