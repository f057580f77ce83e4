/**
 * Tool calls: the events of one call (`tool.before`, permission, progress, `tool.after`, a batch
 * entry) gathered under one key, whether the call ran, and what it did: files read and written,
 * processes, network destinations. A call that did not run is promoted into nothing.
 */
import { canonicalTool, type ToolKind, toolArgument } from './aliases.js';
import {
  contentDigest,
  EXT_PROCESS,
  isRecord,
  normalizePath,
  stringField,
  toolFileChangeOperation,
  type WorkspaceFrame,
} from './normalize.js';
import type { ReadWitness, WriteWitness } from './receipt-files.js';
import type { EventRecord } from './record.js';

export type Verdict = 'allow' | 'deny' | 'ask';

export interface DecisionRow {
  seq: number;
  decision: Verdict;
  by: string;
  /** `record`: the policy decision Tally recorded with the event; `ahp`: a `tool.permission.resolved` event. */
  via: 'record' | 'ahp';
  event_type: string;
  call?: string;
  tool?: string;
  reason?: string;
  rule?: string;
}

/** One witness of a call: a record that carried one of its events. */
interface CallWitness {
  seq: number;
  source: string;
  agent?: string;
}

export interface CallState {
  callId: string;
  name?: string;
  kindHint?: string;
  mcpToolName?: string;
  input?: unknown;
  cwd?: string;
  witnesses: CallWitness[];
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
  fileChanges: { change: unknown; witness: CallWitness }[];
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

export function identify(call: CallState): ToolIdentityFacts {
  const native = call.name ?? '(unnamed)';
  const { canonical, kind } = canonicalTool(native, call.kindHint);
  let effectKind = kind;
  if (kind === 'mcp' || kind === 'other') {
    const inner =
      call.mcpToolName ?? (native.startsWith('mcp__') ? native.split('__').slice(2).join('__') : undefined);
    if (inner !== undefined && inner !== '') {
      const innerKind = canonicalTool(inner).kind;
      if (innerKind !== 'mcp' && innerKind !== 'other') effectKind = innerKind;
    }
  }
  return { canonical, kind, effectKind, native };
}

/** Collects the calls of a session in record order. */
export class CallTable {
  readonly calls = new Map<string, CallState>();
  readonly decisions: DecisionRow[] = [];

  /** Folds a tool record into its call(s); returns the key of the call it belongs to (the last, for a batch). */
  add(record: EventRecord): string | undefined {
    const event = record.event;
    const witness: CallWitness = { seq: record.seq, source: record.source };
    const agent = agentId(record);
    if (agent !== undefined) witness.agent = agent;
    if (event.type === 'tool.batch.after') {
      const entries = Array.isArray(event.calls) ? event.calls : [];
      let last: string | undefined;
      for (const entry of entries) if (isRecord(entry)) last = this.take(record, entry, witness, true);
      this.recordDecision(record, undefined);
      return last;
    }
    const key = this.take(record, event, witness, event.type === 'tool.after');
    this.recordDecision(record, key);
    if (event.type === 'tool.permission.resolved' && key !== undefined) {
      const decision = event.decision;
      if (decision === 'allow' || decision === 'deny') {
        const call = this.calls.get(key)!;
        this.decisions.push({
          seq: record.seq,
          decision,
          by: stringField(event, 'decidedBy') ?? 'unknown',
          via: 'ahp',
          event_type: event.type,
          call: call.callId,
          tool: identify(call).canonical,
        });
        if (decision === 'deny' && call.deniedAt === undefined) call.deniedAt = record.seq;
      }
    }
    return key;
  }

  private recordDecision(record: EventRecord, key: string | undefined): void {
    const d = record.decision;
    if (d === undefined) return;
    const row: DecisionRow = {
      seq: record.seq,
      decision: d.decision,
      by: d.by,
      via: 'record',
      event_type: record.event.type,
    };
    const call = key === undefined ? undefined : this.calls.get(key);
    if (call !== undefined) {
      row.call = call.callId;
      row.tool = identify(call).canonical;
      if (d.decision === 'deny' && call.deniedAt === undefined) call.deniedAt = record.seq;
    }
    if (d.reason !== undefined) row.reason = d.reason;
    if (d.rule !== undefined) row.rule = d.rule;
    this.decisions.push(row);
  }

  /** Folds one tool event (or batch entry) into its call; returns the call key. */
  private take(
    record: EventRecord,
    body: Record<string, unknown>,
    witness: CallWitness,
    isAfter: boolean,
  ): string {
    const callId = stringField(body.call, 'id') ?? `event:${record.event.id}`;
    const key = JSON.stringify([record.event.source, callId]);
    let call = this.calls.get(key);
    if (call === undefined) {
      call = { callId, witnesses: [], executed: false, fileChanges: [] };
      this.calls.set(key, call);
    }
    call.witnesses.push(witness);
    const tool = body.tool;
    if (isRecord(tool)) {
      call.name ??= stringField(tool, 'name');
      call.kindHint ??= stringField(tool, 'kind');
      call.mcpToolName ??= stringField(tool.mcp, 'toolName');
      if (call.input === undefined && tool.input !== undefined) call.input = tool.input;
    }
    const session = record.event.session;
    call.cwd ??= stringField(session, 'cwd');
    if (isAfter) this.takeOutcome(call, body, record, witness);
    return key;
  }

  private takeOutcome(
    call: CallState,
    body: Record<string, unknown>,
    record: EventRecord,
    witness: CallWitness,
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
    const process = isRecord(record.event.extensions) ? record.event.extensions[EXT_PROCESS] : undefined;
    if (isRecord(process)) {
      if (typeof process.exitCode === 'number' && Number.isSafeInteger(process.exitCode))
        call.exitCode = process.exitCode;
      const d = process.durationMs;
      if (call.durationMs === undefined && typeof d === 'number' && Number.isFinite(d) && d >= 0)
        call.durationMs = d;
    }
    if (Array.isArray(body.fileChanges))
      for (const change of body.fileChanges) call.fileChanges.push({ change, witness });
  }
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
  exit_code?: number;
  duration_ms?: number;
  outcome?: string;
  sources: string[];
  agents: string[];
  seqs: number[];
}

export interface NetworkWitness {
  url?: string;
  host?: string;
  port?: number;
  source: string;
  agent?: string;
  seq: number;
}

export interface Promotions {
  reads: ReadWitness[];
  writes: WriteWitness[];
  processes: { firstSeq: number; call: CallState; facts: ToolIdentityFacts; command: string }[];
  network: NetworkWitness[];
}

const WRITE_KIND_OPERATION: Partial<Record<ToolKind, 'written' | 'modified' | 'deleted'>> = {
  write: 'written',
  edit: 'modified',
  delete: 'deleted',
};

/**
 * What each call did. Reported file changes are definite whatever the outcome; paths in a call's
 * input are promoted by tool kind only when the call ran and did not fail.
 */
export function promote(table: CallTable, frame: WorkspaceFrame, out: Promotions): void {
  for (const call of table.calls.values()) {
    for (const { change, witness } of call.fileChanges)
      addReportedChange(change, witness, call.cwd, frame, out);
    if (!callRan(call)) continue;
    const facts = identify(call);
    const arg = toolArgument(call.mcpToolName ?? facts.native, call.input, call.kindHint);
    const firstSeq = call.witnesses[0]?.seq ?? 0;
    if (facts.effectKind === 'shell' && arg.command !== undefined) {
      out.processes.push({ firstSeq, call, facts, command: arg.command });
      continue;
    }
    const fileOk = call.outcome === undefined || call.outcome === 'ok';
    const paths = arg.paths ?? (arg.path === undefined ? [] : [arg.path]);
    const writeOp = WRITE_KIND_OPERATION[facts.effectKind];
    for (const raw of fileOk ? paths : []) {
      const normal = normalizePath(raw, frame, call.cwd);
      if (normal === undefined) continue;
      for (const w of call.witnesses) {
        if (facts.effectKind === 'read') out.reads.push({ ...normal, ...w });
        else if (writeOp !== undefined)
          out.writes.push({ ...normal, ...w, operation: writeOp, definite: false, agentCaused: true });
      }
    }
    if (facts.effectKind === 'fetch') {
      const urls = arg.urls ?? (arg.url === undefined ? [] : [arg.url]);
      for (const url of urls) for (const w of call.witnesses) out.network.push({ url, ...w });
    }
  }
}

function addReportedChange(
  change: unknown,
  witness: CallWitness,
  cwd: string | undefined,
  frame: WorkspaceFrame,
  out: Promotions,
): void {
  const rawPath = stringField(change, 'path');
  const operation = isRecord(change) ? toolFileChangeOperation(change.change) : undefined;
  if (rawPath === undefined || operation === undefined || !isRecord(change)) return;
  const normal = normalizePath(rawPath, frame, cwd);
  if (normal === undefined) return;
  // A change reported as the result of the agent's own tool call is the agent's doing.
  const w: WriteWitness = { ...normal, ...witness, operation, definite: true, agentCaused: true };
  const previous = stringField(change, 'previousPath');
  if (operation === 'renamed' && previous !== undefined) {
    const from = normalizePath(previous, frame, cwd);
    if (from !== undefined) w.from = from.path;
  }
  const before = contentDigest(change.before);
  if (before !== undefined) w.before = before;
  const after = contentDigest(change.after);
  if (after !== undefined) w.after = after;
  out.writes.push(w);
}
