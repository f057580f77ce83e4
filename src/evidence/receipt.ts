/**
 * The session receipt: a pure, deterministic function of the event records. Same records in, same
 * bytes out, on any machine — no clock, no environment, no filesystem, no locale; every list has a
 * defined order by code units or sequence number. The format is defined in docs/receipt.md.
 */
import { canonicalBytes } from '../core/canonical.js';
import { TallyError } from '../core/errors.js';
import {
  compareCodeUnits,
  NETWORK_EVENT_TYPE,
  sessionWorkspace,
  sortedUnique,
  stringField,
} from './normalize.js';
import { type AgentGraph, AgentGraphBuilder } from './receipt-agents.js';
import {
  type CallState,
  CallTable,
  type DecisionRow,
  identify,
  isToolEvent,
  notRunReason,
  type ProcessRow,
  type Promotions,
  promote,
  type ToolIdentityFacts,
  type Verdict,
} from './receipt-calls.js';
import { type FileReadRow, type FileWriteRow, foldReads, foldWrites } from './receipt-files.js';
import {
  fileChangedWitnesses,
  foldNetwork,
  type NetworkRow,
  networkEventWitness,
} from './receipt-sources.js';
import {
  type TimelineEntry,
  timelineEntry,
  UnknownCollector,
  type UnknownSection,
} from './receipt-timeline.js';
import type { EventRecord } from './record.js';

export const RECEIPT_TYPE = 'tally/receipt/v1';

export type ReceiptErrorCode =
  | 'no-records'
  | 'bad-merkle-root'
  | 'bad-record'
  | 'seq-order'
  | 'session-mismatch';
export class ReceiptError extends TallyError<ReceiptErrorCode> {}

/**
 * What the composer takes from the session's own `session.start` event (never from the machine it
 * runs on): the repository root that absolute paths are made relative to, and the agent's cwd that
 * relative paths are resolved against.
 */
export interface ComposeOptions {
  root?: string;
  cwd?: string;
}

export function composeOptionsOf(records: readonly EventRecord[]): ComposeOptions {
  return { ...sessionWorkspace(records).frame };
}

export interface ReceiptSession {
  id: string;
  /** Session ids the harnesses reported in `event.session.id`, when any. */
  harness_sessions: string[];
  start: string;
  end: string;
  /** `session.end` outcome, present only when the session recorded its end. */
  status?: string;
  end_reason?: string;
  harness?: { name: string; version?: string };
  root?: string;
  cwd?: string;
  baseline?: { commit?: string; dirty_at_start: string[]; unchanged_since_start: string[] };
}

export interface ToolCallRow {
  tool: string;
  /** The tool's kind, plus the kind its own name gives an MCP or unfamiliar tool when that differs. */
  kinds: string[];
  native_names: string[];
  count: number;
  /** Calls by reported outcome; `none` when no `tool.after` was recorded. */
  outcomes: Record<string, number>;
  /** Calls known not to have run (denied or skipped). */
  not_run: number;
  decisions: Record<Verdict, number>;
  sources: string[];
}

export interface ReceiptCounts {
  records: number;
  events_by_type: Record<string, number>;
  events_by_source: Record<string, number>;
  agents: number;
  files_read: number;
  files_written: number;
  processes: number;
  network: number;
  tool_calls: number;
  decisions: Record<Verdict, number>;
  unknown_types: number;
}

export interface Receipt {
  type: typeof RECEIPT_TYPE;
  session: ReceiptSession;
  agent_graph: AgentGraph;
  files_read: FileReadRow[];
  files_written: FileWriteRow[];
  processes: ProcessRow[];
  network: NetworkRow[];
  tool_calls: ToolCallRow[];
  decisions: DecisionRow[];
  timeline: TimelineEntry[];
  counts: ReceiptCounts;
  merkle_root: string;
  record_count: number;
  unknown: UnknownSection;
}

const MERKLE_ROOT = /^[0-9a-f]{64}$/;
/** RFC 3339 date-time: parsed the same way by every engine, unlike free-form dates. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function fail(code: ReceiptErrorCode, message: string, pointer: string): never {
  throw new ReceiptError(code, message, { pointer });
}

function checkRecords(records: readonly EventRecord[], merkleRootHex: string): void {
  if (!MERKLE_ROOT.test(merkleRootHex))
    fail('bad-merkle-root', 'merkle root must be 64 lowercase hex digits', '');
  if (records.length === 0) fail('no-records', 'a receipt needs at least one record', '');
  const session = records[0]!.session;
  records.forEach((r, i) => {
    if (r.seq !== i)
      fail('seq-order', `record ${i} has seq ${r.seq}; records must be in order from 0`, `/${i}/seq`);
    if (r.session !== session)
      fail('session-mismatch', `record ${i} belongs to session ${r.session}`, `/${i}/session`);
    if (typeof r.time !== 'string' || !RFC3339.test(r.time) || Number.isNaN(Date.parse(r.time)))
      fail('bad-record', `record ${i} time is not an RFC 3339 timestamp`, `/${i}/time`);
    if (typeof r.source !== 'string' || r.source === '')
      fail('bad-record', `record ${i} has no source`, `/${i}/source`);
    if (typeof r.event?.type !== 'string')
      fail('bad-record', `record ${i} has no event type`, `/${i}/event/type`);
  });
}

/** Counts as an object whose keys are in code-unit order (canonical JSON sorts them again anyway). */
function tally(keys: Iterable<string>): Record<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return Object.fromEntries([...counts.entries()].sort((a, b) => compareCodeUnits(a[0], b[0])));
}

function verdicts(rows: readonly DecisionRow[]): Record<Verdict, number> {
  const out: Record<Verdict, number> = { allow: 0, ask: 0, deny: 0 };
  for (const row of rows) out[row.decision]++;
  return out;
}

function sessionSection(records: readonly EventRecord[]): ReceiptSession {
  let start = records[0]!;
  let end = records[0]!;
  for (const r of records) {
    if (Date.parse(r.time) < Date.parse(start.time)) start = r;
    if (Date.parse(r.time) > Date.parse(end.time)) end = r;
  }
  const section: ReceiptSession = {
    id: records[0]!.session,
    harness_sessions: sortedUnique(records.flatMap((r) => stringField(r.event.session, 'id') ?? [])),
    start: start.time,
    end: end.time,
  };
  const started = records.find((r) => r.event.type === 'session.start')?.event;
  const harnessName = stringField(started?.harness, 'name');
  if (harnessName !== undefined) {
    const version = stringField(started?.harness, 'version');
    section.harness = version === undefined ? { name: harnessName } : { name: harnessName, version };
  }
  const ended = records.findLast((r) => r.event.type === 'session.end')?.event;
  if (ended !== undefined) {
    section.status = stringField(ended, 'outcome') ?? 'unknown';
    const reason = stringField(ended, 'reason');
    if (reason !== undefined) section.end_reason = reason;
  }
  return section;
}

function toolCallRows(table: CallTable): ToolCallRow[] {
  const groups = new Map<string, { calls: ToolIdentityFacts[]; states: CallState[] }>();
  for (const call of table.calls.values()) {
    const facts = identify(call);
    const group = groups.get(facts.canonical) ?? { calls: [], states: [] };
    group.calls.push(facts);
    group.states.push(call);
    groups.set(facts.canonical, group);
  }
  const rows: ToolCallRow[] = [];
  for (const tool of [...groups.keys()].sort(compareCodeUnits)) {
    const group = groups.get(tool)!;
    const callIds = new Set(group.states.map((s) => s.callId));
    rows.push({
      tool,
      kinds: sortedUnique(group.calls.flatMap((c) => [c.kind, c.effectKind])),
      native_names: sortedUnique(group.calls.map((c) => c.native)),
      count: group.states.length,
      outcomes: tally(group.states.map((s) => s.outcome ?? 'none')),
      not_run: group.states.filter((s) => notRunReason(s) !== undefined).length,
      decisions: verdicts(
        table.decisions.filter((d) => d.tool === tool && d.call !== undefined && callIds.has(d.call)),
      ),
      sources: sortedUnique(group.states.flatMap((s) => s.witnesses.map((w) => w.source))),
    });
  }
  return rows;
}

function processRows(promotions: Promotions): ProcessRow[] {
  return [...promotions.processes]
    .sort((a, b) => a.firstSeq - b.firstSeq)
    .map(({ call, facts, command }) => {
      const row: ProcessRow = {
        command,
        tool: facts.canonical,
        call: call.callId,
        sources: sortedUnique(call.witnesses.map((w) => w.source)),
        agents: sortedUnique(call.witnesses.flatMap((w) => w.agent ?? [])),
        seqs: [...new Set(call.witnesses.map((w) => w.seq))].sort((a, b) => a - b),
      };
      if (call.exitCode !== undefined) row.exit_code = call.exitCode;
      if (call.durationMs !== undefined) row.duration_ms = call.durationMs;
      if (call.outcome !== undefined) row.outcome = call.outcome;
      return row;
    });
}

export function composeReceipt(records: readonly EventRecord[], merkleRootHex: string): Receipt {
  checkRecords(records, merkleRootHex);
  const workspace = sessionWorkspace(records);
  const frame = workspace.frame;
  const calls = new CallTable();
  const agents = new AgentGraphBuilder();
  const unknown = new UnknownCollector();
  const promotions: Promotions = { reads: [], writes: [], processes: [], network: [] };
  const decisions: DecisionRow[] = [];
  for (const record of records) {
    agents.add(record);
    unknown.add(record);
    const type = record.event.type;
    if (isToolEvent(type)) {
      calls.add(record);
      continue;
    }
    if (type === 'file.changed') promotions.writes.push(...fileChangedWitnesses(record, frame));
    else if (type === NETWORK_EVENT_TYPE) promotions.network.push(...networkEventWitness(record));
    const d = record.decision;
    if (d !== undefined) {
      const row: DecisionRow = {
        seq: record.seq,
        decision: d.decision,
        by: d.by,
        via: 'record',
        event_type: type,
      };
      if (d.reason !== undefined) row.reason = d.reason;
      if (d.rule !== undefined) row.rule = d.rule;
      decisions.push(row);
    }
  }
  promote(calls, frame, promotions);
  for (const call of calls.calls.values()) agents.countCall(call.witnesses[0]?.agent);
  const allDecisions = [...decisions, ...calls.decisions].sort((a, b) => a.seq - b.seq);

  const session = sessionSection(records);
  if (frame.root !== undefined) session.root = frame.root;
  if (frame.cwd !== undefined) session.cwd = frame.cwd;
  const writes = foldWrites(promotions.writes, workspace.baselineDirty);
  if (workspace.baselineCommit !== undefined || workspace.baselineDirty.size > 0) {
    session.baseline = {
      dirty_at_start: sortedUnique(workspace.baselineDirty.keys()),
      unchanged_since_start: writes.unchangedSinceStart,
    };
    if (workspace.baselineCommit !== undefined) session.baseline.commit = workspace.baselineCommit;
  }

  const filesRead = foldReads(promotions.reads);
  const processes = processRows(promotions);
  const network = foldNetwork(promotions.network);
  const toolCalls = toolCallRows(calls);
  const graph = agents.build();
  const unknownSection = unknown.build(compareCodeUnits);
  const timeline = records.map((r) => {
    const key = calls.callOfSeq.get(r.seq);
    return timelineEntry(r, key === undefined ? undefined : calls.calls.get(key), frame);
  });

  return {
    type: RECEIPT_TYPE,
    session,
    agent_graph: graph,
    files_read: filesRead,
    files_written: writes.rows,
    processes,
    network,
    tool_calls: toolCalls,
    decisions: allDecisions,
    timeline,
    counts: {
      records: records.length,
      events_by_type: tally(records.map((r) => r.event.type)),
      events_by_source: tally(records.map((r) => r.source)),
      agents: graph.agents.length,
      files_read: filesRead.length,
      files_written: writes.rows.length,
      processes: processes.length,
      network: network.length,
      tool_calls: calls.calls.size,
      decisions: verdicts(allDecisions),
      unknown_types: unknownSection.types.length,
    },
    merkle_root: merkleRootHex,
    record_count: records.length,
    unknown: unknownSection,
  };
}

/** The receipt's bytes: canonical JSON (RFC 8785), UTF-8. */
export function receiptBytes(receipt: Receipt): Buffer {
  return canonicalBytes(receipt);
}
