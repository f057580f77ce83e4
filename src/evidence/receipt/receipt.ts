/**
 * The session receipt: a pure, deterministic function of the event records. Same records in, same
 * bytes out, on any machine — no clock, no environment, no filesystem, no locale; every list has a
 * defined order by code units or sequence number. The format is defined in docs/receipt.md.
 */

import { canonicalBytes } from '../../core/canonical.js';
import { TallyError } from '../../core/errors.js';
import {
  compareCodeUnits,
  NETWORK_EVENT_TYPE,
  type SessionWorkspace,
  sessionWorkspace,
  sortedUnique,
  stringField,
} from '../normalize.js';
import {
  isCloseRecord,
  isPassReport,
  RECONCILE_CORROBORATED_TYPE,
  RECONCILE_SUMMARY_TYPE,
  RENAME_SOURCES_KEPT,
} from '../record/close-passes.js';
import type { EventRecord } from '../record/record.js';
import { type AgentGraph, AgentGraphBuilder } from './agents.js';
import { DecisionLedger, type DecisionsOmitted } from './bounds.js';
import {
  type CallState,
  CallTable,
  type DecisionRow,
  decisionRow,
  identify,
  isToolEvent,
  type ProcessRow,
  type PromotionSink,
  promote,
  type Verdict,
} from './calls.js';
import { type FileReadRow, type FileWriteRow, ReadLedger, WriteLedger } from './files.js';
import { fitReceipt } from './fit.js';
import { ReconcileParts, reconcileBody } from './reconcile-parts.js';
import { omittedField, ROW_SHARE_BYTES, shareRows } from './row-share.js';
import { type ProcessesOmitted, ProcessLedger, sortedCounts, ToolLedger } from './rows.js';
import { type ReceiptSince, sinceOf } from './since.js';
import { fileChangedWitnesses, NetworkLedger, type NetworkRow, networkEvent } from './sources.js';
import {
  pendingEntry,
  resolveEntry,
  type TimelineEntry,
  type TimelineOmitted,
  TimelineWindow,
  UnknownCollector,
  type UnknownSection,
} from './timeline.js';
import type { ToolCallRow } from './types.js';

export const RECEIPT_TYPES = { 1: 'tally/receipt/v1', 2: 'tally/receipt/v2' } as const;
export const RECEIPT_TYPE = RECEIPT_TYPES[2];

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
  const { root, cwd } = sessionWorkspace(records).frame;
  return { ...(root === undefined ? {} : { root }), ...(cwd === undefined ? {} : { cwd }) };
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
  /** What changed in the tree after the previous session closed and before this one started. */
  since?: ReceiptSince;
  /** v2: the certificate the session was bound to at its start. */
  certificate?: { digest: string; serial: string; agent: string };
  /** v2: the hook registration in force at its start. */
  registration?: { digest: string };
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
  type: (typeof RECEIPT_TYPES)[1 | 2];
  session: ReceiptSession;
  agent_graph: AgentGraph;
  files_read: FileReadRow[];
  /**
   * Present only when the open-ended lists passed their share of the receipt (these four;
   * docs/receipt.md#bounds): how many rows were left out. `counts` stays whole.
   */
  files_read_omitted?: { count: number };
  files_written: FileWriteRow[];
  files_written_omitted?: { count: number };
  processes: ProcessRow[];
  /** Present only when the session ran more than `PROCESS_ROWS` processes (docs/receipt.md#bounds). */
  processes_omitted?: ProcessesOmitted;
  network: NetworkRow[];
  network_omitted?: { count: number };
  tool_calls: ToolCallRow[];
  tool_calls_omitted?: { count: number };
  decisions: DecisionRow[];
  /** Present only when a verdict had more decisions than its `DECISION_ROWS` (docs/receipt.md#bounds). */
  decisions_omitted?: DecisionsOmitted;
  timeline: TimelineEntry[];
  /** Present only when the session is longer than the timeline window (docs/receipt.md#timeline). */
  timeline_omitted?: TimelineOmitted;
  counts: ReceiptCounts;
  merkle_root: string;
  record_count: number;
  unknown: UnknownSection;
  /**
   * Present only when the receipt passed what its seal line holds (./fit.ts): the sections
   * emptied, whole, to fit. `counts` keeps its totals.
   */
  sections_omitted?: string[];
}

const MERKLE_ROOT = /^[0-9a-f]{64}$/;
/** RFC 3339 date-time: parsed the same way by every engine, unlike free-form dates. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function fail(code: ReceiptErrorCode, message: string, pointer: string): never {
  throw new ReceiptError(code, message, { pointer });
}

function checkRecord(r: EventRecord, i: number, session: string): void {
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
}

function checkRoot(merkleRootHex: string): void {
  if (!MERKLE_ROOT.test(merkleRootHex))
    fail('bad-merkle-root', 'merkle root must be 64 lowercase hex digits', '');
}

/**
 * Composes the receipt one record at a time. Its state is bounded by what the receipt itself holds
 * (docs/receipt.md#bounds): the rows of files, tools, agents and network destinations, the listed
 * decisions and processes and the summaries of the rest, at most `CALL_WINDOW` calls in progress,
 * the bounded timeline, and counters; never the records. Records must arrive in order. Until the
 * session's `session.start` has been seen (normally record 0) the workspace frame is unknown, so
 * records before it wait for it.
 */
export class ReceiptComposer {
  private count = 0;
  private version: 1 | 2 = 2;
  private session = '';
  private binding: EventRecord['binding'];
  private workspace: SessionWorkspace | undefined;
  private waiting: EventRecord[] = [];
  private readonly decisions = new DecisionLedger();
  private readonly reads = new ReadLedger();
  private readonly writes = new WriteLedger();
  private readonly processes = new ProcessLedger();
  private readonly network = new NetworkLedger();
  private readonly reconcileParts = new ReconcileParts();
  /** The pass's summary keeps a rename's source it reported as a row of its own (net.ts). */
  private renameSourcesKept = false;
  private readonly tools = new ToolLedger();
  private readonly agents = new AgentGraphBuilder();
  private readonly calls = new CallTable({
    decision: (row) => this.decisions.add(row),
    fold: (call) => this.fold(call),
  });
  private readonly promotions: PromotionSink = {
    read: (path, w) => this.reads.add(path, w),
    inferredWrite: (path, operation, w) => this.writes.addInferred(path, operation, w),
    reportedWrite: (w) => this.writes.addDefinite(w),
    process: (call, facts, command) => this.processes.add(call, facts, command),
    fetch: (url, w) => this.network.addFetch(url, w),
  };
  private readonly unknown = new UnknownCollector();
  private readonly timeline = new TimelineWindow();
  private readonly byType = new Map<string, number>();
  private readonly bySource = new Map<string, number>();
  private readonly harnessSessions = new Set<string>();
  private first: { time: string; at: number } | undefined;
  private last: { time: string; at: number } | undefined;
  private started: EventRecord['event'] | undefined;
  private ended: EventRecord['event'] | undefined;

  /** Number of records added so far. */
  get records(): number {
    return this.count;
  }

  add(record: EventRecord): void {
    if (this.count === 0) {
      this.session = record.session;
      this.version = record.v;
    }
    checkRecord(record, this.count, this.session);
    if (record.v !== this.version)
      fail(
        'bad-record',
        `record ${this.count} is v${record.v} in a v${this.version} session`,
        `/${this.count}/v`,
      );
    this.count++;
    if (this.workspace === undefined) {
      if (record.event.type !== 'session.start') {
        this.waiting.push(record);
        return;
      }
      this.workspace = sessionWorkspace([record]);
      this.flushWaiting();
    }
    this.take(record);
  }

  private flushWaiting(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const r of waiting) this.take(r);
  }

  /** A call leaves the table: its effects go into the ledgers, and it counts for its tool and agent. */
  private fold(call: CallState): void {
    const facts = identify(call);
    this.tools.add(call, facts);
    this.agents.countCall(call.firstAgent);
    promote(call, this.workspace!.frame, this.promotions);
  }

  private take(record: EventRecord): void {
    const frame = this.workspace!.frame;
    const event = record.event;
    const type = event.type;
    this.window(record);
    this.byType.set(type, (this.byType.get(type) ?? 0) + 1);
    this.bySource.set(record.source, (this.bySource.get(record.source) ?? 0) + 1);
    this.agents.add(record);
    this.unknown.add(record);
    if (isToolEvent(type)) {
      const call = this.calls.add(record);
      this.timeline.add(pendingEntry(record, frame, type === 'tool.batch.after' ? undefined : call));
      return;
    }
    this.timeline.add(pendingEntry(record, frame));
    if (isPassReport(record))
      for (const w of this.reconcileParts.report(record, frame)) this.writes.addDefinite(w);
    else if (type === 'file.changed')
      for (const w of fileChangedWitnesses(record, frame)) this.writes.addDefinite(w);
    // A v1 receipt reads no corroborated paths, but the pass's reports of the summary's attempt.
    else if (isCloseRecord(record, RECONCILE_SUMMARY_TYPE)) {
      for (const w of this.reconcileParts.summary(record, frame, this.version === 2))
        this.writes.addDefinite(w);
      this.renameSourcesKept = reconcileBody(record).rename_sources === RENAME_SOURCES_KEPT;
    } else if (isCloseRecord(record, RECONCILE_CORROBORATED_TYPE) && this.version === 2)
      for (const w of this.reconcileParts.part(record, frame)) this.writes.addDefinite(w);
    else if (type === NETWORK_EVENT_TYPE) {
      const destination = networkEvent(record);
      if (destination !== undefined) this.network.addEvent(destination, record);
    }
    const row = decisionRow(record);
    if (row !== undefined) this.decisions.add(row);
  }

  /** Session window and the facts of its first start and last end. */
  private window(record: EventRecord): void {
    const at = Date.parse(record.time);
    if (this.first === undefined || at < this.first.at) this.first = { time: record.time, at };
    if (this.last === undefined || at > this.last.at) this.last = { time: record.time, at };
    const harnessSession = stringField(record.event.session, 'id');
    if (harnessSession !== undefined) this.harnessSessions.add(harnessSession);
    if (record.event.type === 'session.start' && this.started === undefined) {
      this.started = record.event;
      this.binding = record.binding;
    }
    if (record.event.type === 'session.end') this.ended = record.event;
  }

  private sessionSection(): ReceiptSession {
    const section: ReceiptSession = {
      id: this.session,
      harness_sessions: sortedUnique(this.harnessSessions),
      start: this.first!.time,
      end: this.last!.time,
    };
    const harnessName = stringField(this.started?.harness, 'name');
    if (harnessName !== undefined) {
      const version = stringField(this.started?.harness, 'version');
      section.harness = version === undefined ? { name: harnessName } : { name: harnessName, version };
    }
    const since = sinceOf(this.started);
    if (since !== undefined) section.since = since;
    if (this.binding?.certificate !== undefined) section.certificate = { ...this.binding.certificate };
    if (this.binding?.registration !== undefined) section.registration = { ...this.binding.registration };
    if (this.ended !== undefined) {
      section.status = stringField(this.ended, 'outcome') ?? 'unknown';
      const reason = stringField(this.ended, 'reason');
      if (reason !== undefined) section.end_reason = reason;
    }
    return section;
  }

  /**
   * The receipt over every record added; the composer is spent afterwards. `rowShare` is what the
   * open-ended lists may take (row-share.ts): a receipt is always made with the default; the close's
   * pass reads every row of the records, past the share too.
   */
  finish(merkleRootHex: string, rowShare = ROW_SHARE_BYTES): Receipt {
    checkRoot(merkleRootHex);
    if (this.count === 0) fail('no-records', 'a receipt needs at least one record', '');
    if (this.workspace === undefined) {
      this.workspace = sessionWorkspace([]);
      this.flushWaiting();
    }
    const workspace = this.workspace;
    const frame = workspace.frame;
    this.calls.finish();

    const session = this.sessionSection();
    if (frame.root !== undefined) session.root = frame.root;
    if (frame.cwd !== undefined) session.cwd = frame.cwd;
    const writes = this.writes.build(workspace.baselineDirty, this.version === 2, this.renameSourcesKept);
    if (workspace.baselineCommit !== undefined || workspace.baselineDirty.size > 0) {
      session.baseline = {
        dirty_at_start: sortedUnique(workspace.baselineDirty.keys()),
        unchanged_since_start: writes.unchangedSinceStart,
      };
      if (workspace.baselineCommit !== undefined) session.baseline.commit = workspace.baselineCommit;
    }

    const filesRead = this.reads.build();
    const processes = this.processes.rows();
    const processesOmitted = this.processes.omitted();
    const network = this.network.build();
    const toolCalls = this.tools.build();
    const graph = this.agents.build();
    const unknownSection = this.unknown.build(compareCodeUnits);
    const timeline = this.timeline.entries().map((p) => resolveEntry(p, frame));
    const [written, read, reached, tools] = shareRows([writes.rows, filesRead, network, toolCalls], rowShare);
    const omitted = this.timeline.omitted();
    const decisionsOmitted = this.decisions.omitted();

    return fitReceipt({
      type: RECEIPT_TYPES[this.version],
      session,
      agent_graph: graph,
      files_read: read.rows,
      ...omittedField('files_read', read),
      files_written: written.rows,
      ...omittedField('files_written', written),
      processes,
      ...(processesOmitted === undefined ? {} : { processes_omitted: processesOmitted }),
      network: reached.rows,
      ...omittedField('network', reached),
      tool_calls: tools.rows,
      ...omittedField('tool_calls', tools),
      decisions: this.decisions.rows,
      ...(decisionsOmitted === undefined ? {} : { decisions_omitted: decisionsOmitted }),
      timeline,
      ...(omitted === undefined ? {} : { timeline_omitted: omitted }),
      counts: {
        records: this.count,
        events_by_type: sortedCounts(this.byType),
        events_by_source: sortedCounts(this.bySource),
        agents: graph.agents.length,
        files_read: filesRead.length,
        files_written: writes.rows.length,
        processes: this.processes.count,
        network: network.length,
        tool_calls: this.calls.count,
        decisions: { ...this.decisions.totals },
        unknown_types: unknownSection.types.length,
      },
      merkle_root: merkleRootHex,
      record_count: this.count,
      unknown: unknownSection,
    });
  }
}

/** The receipt of a whole list of records: `ReceiptComposer` fed every record in order. */
export function composeReceipt(records: readonly EventRecord[], merkleRootHex: string): Receipt {
  checkRoot(merkleRootHex);
  if (records.length === 0) fail('no-records', 'a receipt needs at least one record', '');
  const composer = new ReceiptComposer();
  for (const record of records) composer.add(record);
  return composer.finish(merkleRootHex);
}

/** The receipt's bytes: canonical JSON (RFC 8785), UTF-8. */
export function receiptBytes(receipt: Receipt): Buffer {
  return canonicalBytes(receipt);
}

export type { ToolCallRow } from './types.js';
