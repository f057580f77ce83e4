/**
 * Tool calls: the events of one call (`tool.before`, permission, progress, `tool.after`, a batch
 * entry) gathered under one key, whether the call ran, and what it did: files read and written,
 * processes, network destinations. A call that did not run is promoted into nothing.
 */

import { isJsonObject } from '../../core/json.js';
import {
  contentDigest,
  EXT_PROCESS,
  type FileOperation,
  type NormalPath,
  normalizePath,
  stringField,
  toolFileChangeOperation,
  type WorkspaceFrame,
} from '../normalize.js';
import {
  canonicalTool,
  kindFromHint,
  type ToolArgument,
  type ToolKind,
  toolArgument,
} from '../policy/aliases.js';
import type { EventRecord } from '../record/record.js';
import { addSeq, CALL_WINDOW, type WitnessSet } from './bounds.js';
import type { DecisionRow, Verdict, WriteWitness } from './types.js';

/** The decision row of a record that carries a decision (`via: 'record'`). */
export function decisionRow(record: EventRecord): DecisionRow | undefined {
  const d = record.decision;
  if (d === undefined) return undefined;
  const row: DecisionRow = {
    seq: record.seq,
    decision: d.decision,
    by: d.by,
    via: 'record',
    event_type: record.event.type,
  };
  if (d.reason !== undefined) row.reason = d.reason;
  if (d.rule !== undefined) row.rule = d.rule;
  if (record.answers !== undefined)
    row.answers = record.answers.map((a) => ({ backend: a.backend, decision: a.decision, status: a.status }));
  return row;
}

/** A change a `tool.after` (or batch entry) reported, reduced to what the receipt reads of it. */
export interface ReportedChange {
  path: string;
  operation: FileOperation;
  previousPath?: string;
  before?: string;
  after?: string;
  seq: number;
  source: string;
  agent?: string;
}

/**
 * One call, reduced to what the receipt needs of it: its identity, its target (command, paths,
 * URLs — never the whole input), its witnesses, outcome and reported changes.
 */
export interface CallState extends WitnessSet {
  /**
   * The call's records, ascending; its sources and agents, distinct. Short lists, so arrays that
   * are copied at their exact length as they grow (see `withSeq`): a call is usually two records.
   */
  seqs: number[];
  sources: string[];
  agents: string[];
  callId: string;
  /** Order in which the call was first seen; breaks ties between calls first seen in one record. */
  ordinal: number;
  name?: string;
  kindHint?: string;
  mcpToolName?: string;
  /** The target, read from the first tool input once the tool's name is known. */
  arg?: ToolArgument;
  /** A tool input seen before the tool's name; read into `arg` when the name arrives or the call is folded. */
  pendingInput?: unknown;
  inputSeen: boolean;
  cwd?: string;
  firstSeq: number;
  /** Agent of the call's first record. */
  firstAgent?: string;
  /** Outcome from `tool.after` / a batch entry (`ok`, `error`, `denied`, `cancelled`, `timeout`). */
  outcome?: string;
  /** True when the harness reported `execution.status: "executed"`. */
  executed: boolean;
  /** Execution skip reason, when the harness reported the call as skipped. */
  skipped?: string;
  /** Seq of the first deny: a recorded decision or a `tool.permission.resolved`. */
  deniedAt?: number;
  durationMs?: number;
  exitCode?: number;
  fileChanges?: ReportedChange[];
  /** Decisions about this call, by the canonical tool name they were recorded under. */
  decisions?: DecisionCount[];
  /** True once a `tool.after` or batch entry reported the call's end. */
  ended: boolean;
}

export interface DecisionCount extends Record<Verdict, number> {
  tool: string;
}

export interface ToolIdentityFacts {
  canonical: string;
  kind: ToolKind;
  /** The kind used for promotion: an MCP tool's own name can say it reads, writes or runs. */
  effectKind: ToolKind;
  native: string;
}

const TOOL_EVENTS = new Set([
  'tool.before',
  'tool.after',
  'tool.permission.request',
  'tool.permission.resolved',
  'tool.progress',
]);

export function isToolEvent(type: string): boolean {
  return TOOL_EVENTS.has(type) || type === 'tool.batch.after';
}

export function agentId(record: EventRecord): string | undefined {
  return record.agent === undefined ? undefined : (record.agent.instance ?? record.agent.name);
}

const UNNAMED = '(unnamed)';

export function identify(call: CallState): ToolIdentityFacts {
  const native = call.name ?? UNNAMED;
  const { canonical, kind } = canonicalTool(native, call.kindHint);
  let effectKind = kind;
  if (kind === 'mcp' || kind === 'other') {
    const inner =
      call.mcpToolName ?? (native.startsWith('mcp__') ? native.split('__').slice(2).join('__') : undefined);
    if (inner !== undefined && inner !== '') {
      const innerKind = canonicalTool(inner).kind;
      if (innerKind !== 'mcp' && innerKind !== 'other') effectKind = innerKind;
    }
    // The gateway's kind, read from the tool's input schema, when the inner name says nothing.
    const hinted = kindFromHint(call.kindHint);
    if ((effectKind === 'mcp' || effectKind === 'other') && hinted !== undefined) effectKind = hinted;
  }
  return { canonical, kind, effectKind, native };
}

/** Where the call table sends what it learns: decisions as they are made, calls as they are folded. */
export interface CallSink {
  decision(row: DecisionRow): void;
  fold(call: CallState): void;
}

/**
 * Collects the calls of a session in record order. It holds at most `CALL_WINDOW.open` calls that
 * have not reported their end (`tool.after` or a batch entry) and `CALL_WINDOW.ended` that have;
 * past either bound, the least recently active call of that kind is folded (handed to the sink)
 * and forgotten. `finish` folds the rest, in the order they were first seen.
 */
export class CallTable {
  /** Calls by key, least recently active first. */
  private readonly open = new Map<string, CallState>();
  private readonly ended = new Map<string, CallState>();
  private ordinals = 0;

  constructor(private readonly sink: CallSink) {}

  /** Distinct calls seen so far. */
  get count(): number {
    return this.ordinals;
  }

  /** Folds a tool record into its call(s); returns the call it belongs to (the last, for a batch). */
  add(record: EventRecord): CallState | undefined {
    const event = record.event;
    const agent = agentId(record);
    if (event.type === 'tool.batch.after') {
      const entries = Array.isArray(event.calls) ? event.calls : [];
      let last: CallState | undefined;
      for (const entry of entries) if (isJsonObject(entry)) last = this.take(record, entry, agent, true);
      this.recordDecision(record, undefined);
      return last;
    }
    const call = this.take(record, event, agent, event.type === 'tool.after');
    this.recordDecision(record, call);
    if (event.type === 'tool.permission.resolved') {
      const decision = event.decision;
      if (decision === 'allow' || decision === 'deny') {
        const tool = identify(call).canonical;
        this.sink.decision({
          seq: record.seq,
          decision,
          by: stringField(event, 'decidedBy') ?? 'unknown',
          via: 'ahp',
          event_type: event.type,
          call: call.callId,
          tool,
        });
        countDecision(call, tool, decision);
        if (decision === 'deny' && call.deniedAt === undefined) call.deniedAt = record.seq;
      }
    }
    return call;
  }

  /** Folds every call still held, in the order the calls were first seen. */
  finish(): void {
    const rest = [...this.open.values(), ...this.ended.values()].sort((a, b) => a.ordinal - b.ordinal);
    this.open.clear();
    this.ended.clear();
    for (const call of rest) this.sink.fold(call);
  }

  /** Folds the least recently active call of a table that is over its bound. */
  private trim(table: Map<string, CallState>, bound: number): void {
    if (table.size <= bound) return;
    const [key, call] = table.entries().next().value as [string, CallState];
    table.delete(key);
    this.sink.fold(call);
  }

  private recordDecision(record: EventRecord, call: CallState | undefined): void {
    const row = decisionRow(record);
    if (row === undefined) return;
    const d = row;
    if (call !== undefined) {
      row.call = call.callId;
      row.tool = identify(call).canonical;
      countDecision(call, row.tool, d.decision);
      if (d.decision === 'deny' && call.deniedAt === undefined) call.deniedAt = record.seq;
    }
    this.sink.decision(row);
  }

  /**
   * The call a tool event (or batch entry) belongs to, created if new, and made the most recently
   * active of its table — the ended calls once this event ends it.
   */
  private callFor(record: EventRecord, body: Record<string, unknown>, ends: boolean): CallState {
    const callId = stringField(body.call, 'id') ?? `event:${record.event.id}`;
    const key = JSON.stringify([record.event.source, callId]);
    const agent = agentId(record);
    let call = this.open.get(key);
    if (call !== undefined) this.open.delete(key);
    else {
      call = this.ended.get(key);
      if (call !== undefined) this.ended.delete(key);
    }
    if (call === undefined) call = this.newCall(record, callId, agent);
    if (ends || call.ended) {
      call.ended = true;
      this.ended.set(key, call);
      this.trim(this.ended, CALL_WINDOW.ended);
    } else {
      this.open.set(key, call);
      this.trim(this.open, CALL_WINDOW.open);
    }
    return call;
  }

  private newCall(record: EventRecord, callId: string, agent: string | undefined): CallState {
    return {
      callId,
      ordinal: this.ordinals++,
      seqs: [],
      sources: [record.source],
      agents: agent === undefined ? NO_AGENTS : [agent],
      inputSeen: false,
      firstSeq: record.seq,
      executed: false,
      // Every field is present from the start, so calls share one compact object shape.
      name: undefined,
      kindHint: undefined,
      mcpToolName: undefined,
      arg: undefined,
      pendingInput: undefined,
      cwd: undefined,
      firstAgent: agent,
      outcome: undefined,
      skipped: undefined,
      deniedAt: undefined,
      durationMs: undefined,
      exitCode: undefined,
      fileChanges: undefined,
      decisions: undefined,
      ended: false,
    };
  }

  /** Folds one tool event (or batch entry) into its call. */
  private take(
    record: EventRecord,
    body: Record<string, unknown>,
    agent: string | undefined,
    isAfter: boolean,
  ): CallState {
    const call = this.callFor(record, body, isAfter);
    call.seqs = withSeq(call.seqs, record.seq);
    if (!call.sources.includes(record.source)) call.sources = [...call.sources, record.source];
    if (agent !== undefined && !call.agents.includes(agent)) call.agents = [...call.agents, agent];
    const tool = body.tool;
    if (isJsonObject(tool)) {
      call.name ??= stringField(tool, 'name');
      call.kindHint ??= stringField(tool, 'kind');
      call.mcpToolName ??= stringField(tool.mcp, 'toolName');
      if (!call.inputSeen && tool.input !== undefined) {
        call.inputSeen = true;
        call.pendingInput = tool.input;
      } else if (isAfter && tool.input !== undefined && call.name !== undefined) {
        // What ran is what the end reports: its target, when it names one, is the call's.
        const ran = toolArgument(call.mcpToolName ?? call.name, tool.input, call.kindHint);
        if (Object.keys(ran).length > 0) {
          call.arg = ran;
          call.pendingInput = undefined;
        }
      }
      if (call.pendingInput !== undefined && call.name !== undefined) callArgument(call);
    }
    const session = record.event.session;
    call.cwd ??= stringField(session, 'cwd');
    if (isAfter) this.takeOutcome(call, body, record, agent);
    return call;
  }

  private takeOutcome(
    call: CallState,
    body: Record<string, unknown>,
    record: EventRecord,
    agent: string | undefined,
  ): void {
    const outcome = stringField(body, 'outcome');
    if (outcome !== undefined) call.outcome = outcome;
    const execution = body.execution;
    const status = stringField(execution, 'status');
    if (status === 'executed') call.executed = true;
    else if (status === 'skipped') call.skipped = stringField(execution, 'reason') ?? 'other';
    const duration = body.durationMs;
    if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0)
      call.durationMs = duration;
    const process = isJsonObject(record.event.extensions) ? record.event.extensions[EXT_PROCESS] : undefined;
    if (isJsonObject(process)) {
      if (typeof process.exitCode === 'number' && Number.isSafeInteger(process.exitCode))
        call.exitCode = process.exitCode;
      const d = process.durationMs;
      if (call.durationMs === undefined && typeof d === 'number' && Number.isFinite(d) && d >= 0)
        call.durationMs = d;
    }
    if (Array.isArray(body.fileChanges))
      for (const change of body.fileChanges) {
        const reported = reportedChange(change, record, agent);
        if (reported === undefined) continue;
        call.fileChanges ??= [];
        call.fileChanges.push(reported);
      }
  }
}

function countDecision(call: CallState, tool: string, verdict: Verdict): void {
  call.decisions ??= [];
  let counts = call.decisions.find((d) => d.tool === tool);
  if (counts === undefined) {
    counts = { tool, allow: 0, ask: 0, deny: 0 };
    call.decisions.push(counts);
  }
  counts[verdict]++;
}

const NO_AGENTS: string[] = [];
/** Below this length a call's seqs are copied at their exact size rather than grown in place. */
const SMALL = 8;

/** `seqs` with `seq` added (ascending, distinct). */
function withSeq(seqs: number[], seq: number): number[] {
  const n = seqs.length;
  if (n > 0 && seqs[n - 1] === seq) return seqs;
  if (n >= SMALL) {
    addSeq(seqs, seq);
    return seqs;
  }
  if (n === 0 || seq > seqs[n - 1]!) return [...seqs, seq];
  const copy = seqs.slice();
  addSeq(copy, seq);
  return copy;
}

/** The call's target, read once from its first tool input (the input itself is not kept). */
export function callArgument(call: CallState): ToolArgument {
  if (call.arg === undefined) {
    const native = call.name ?? UNNAMED;
    call.arg = toolArgument(call.mcpToolName ?? native, call.pendingInput, call.kindHint);
    call.pendingInput = undefined;
  }
  return call.arg;
}

/** A `fileChanges[]` entry reduced to its path, operation and content digests (never its content). */
function reportedChange(
  change: unknown,
  record: EventRecord,
  agent: string | undefined,
): ReportedChange | undefined {
  const path = stringField(change, 'path');
  const operation = isJsonObject(change) ? toolFileChangeOperation(change.change) : undefined;
  if (path === undefined || operation === undefined || !isJsonObject(change)) return undefined;
  const out: ReportedChange = { path, operation, seq: record.seq, source: record.source };
  if (agent !== undefined) out.agent = agent;
  const previous = stringField(change, 'previousPath');
  if (previous !== undefined) out.previousPath = previous;
  const before = contentDigest(change.before);
  if (before !== undefined) out.before = before;
  const after = contentDigest(change.after);
  if (after !== undefined) out.after = after;
  return out;
}

/** Did the call run? Only an execution report says yes; a deny or a skip without one says no. */
export function callRan(call: CallState): boolean {
  if (call.executed) return true;
  if (call.skipped !== undefined || call.outcome === 'denied') return false;
  return call.deniedAt === undefined;
}

/** Why a call is known not to have run, for the receipt's tool rows. */
export function notRunReason(call: CallState): string | undefined {
  if (callRan(call)) return undefined;
  if (call.outcome === 'denied' || call.skipped === 'policy') return 'denied';
  if (call.skipped !== undefined) return `skipped:${call.skipped}`;
  return 'denied';
}

export interface ProcessRow {
  command: string;
  tool: string;
  call: string;
  /** Only the agent's transcript saw this call: no hook reported it. */
  seen_only_in_transcript?: true;
  exit_code?: number;
  duration_ms?: number;
  outcome?: string;
  sources: string[];
  agents: string[];
  seqs: number[];
  seq_count?: number;
}

/** Where a folded call's effects go: the file, process and network ledgers. */
export interface PromotionSink {
  read(path: NormalPath, witnesses: WitnessSet): void;
  /** A write inferred from the tool's kind. */
  inferredWrite(path: NormalPath, operation: 'written' | 'modified' | 'deleted', witnesses: WitnessSet): void;
  /** A change the call itself reported. */
  reportedWrite(witness: WriteWitness): void;
  process(call: CallState, facts: ToolIdentityFacts, command: string): void;
  fetch(url: string, witnesses: WitnessSet): void;
}

const WRITE_KIND_OPERATION: Partial<Record<ToolKind, 'written' | 'modified' | 'deleted'>> = {
  write: 'written',
  edit: 'modified',
  delete: 'deleted',
};

/**
 * What one call did. Reported file changes are definite whatever the outcome; paths in a call's
 * input are promoted by tool kind only when the call ran and did not fail.
 */
export function promote(call: CallState, frame: WorkspaceFrame, out: PromotionSink): void {
  for (const change of call.fileChanges ?? []) addReportedChange(change, call.cwd, frame, out);
  const arg = callArgument(call);
  if (!callRan(call)) return;
  const facts = identify(call);
  if (facts.effectKind === 'shell' && arg.command !== undefined) {
    out.process(call, facts, arg.command);
    return;
  }
  const fileOk = call.outcome === undefined || call.outcome === 'ok';
  const paths = arg.paths ?? (arg.path === undefined ? [] : [arg.path]);
  const writeOp = WRITE_KIND_OPERATION[facts.effectKind];
  for (const raw of fileOk ? paths : []) {
    const normal = normalizePath(raw, frame, call.cwd);
    if (normal === undefined) continue;
    if (facts.effectKind === 'read') out.read(normal, call);
    else if (writeOp !== undefined) out.inferredWrite(normal, writeOp, call);
  }
  if (facts.effectKind === 'fetch') {
    const urls = arg.urls ?? (arg.url === undefined ? [] : [arg.url]);
    for (const url of urls) out.fetch(url, call);
  }
}

function addReportedChange(
  change: ReportedChange,
  cwd: string | undefined,
  frame: WorkspaceFrame,
  out: PromotionSink,
): void {
  const normal = normalizePath(change.path, frame, cwd);
  if (normal === undefined) return;
  // A change reported as the result of the agent's own tool call is the agent's doing.
  const w: WriteWitness = {
    ...normal,
    operation: change.operation,
    definite: true,
    agentCaused: true,
    source: change.source,
    seq: change.seq,
  };
  if (change.agent !== undefined) w.agent = change.agent;
  if (change.operation === 'renamed' && change.previousPath !== undefined) {
    const from = normalizePath(change.previousPath, frame, cwd);
    if (from !== undefined) w.from = from.path;
  }
  if (change.before !== undefined) w.before = change.before;
  if (change.after !== undefined) w.after = change.after;
  out.reportedWrite(w);
}

export type { DecisionRow, Verdict } from './types.js';
