/**
 * What verification keeps while records stream past: the Merkle root (leaves per the package's
 * format), the receipt being recomputed, the chain head, the first record later than `now`, and
 * the few records cross-verification needs. Memory is bounded by the receipt, not by the records.
 */
import type { CheckedRecord } from '../log/reader.js';
import { ReceiptComposer } from '../receipt/receipt.js';
import {
  isCloseOnlyType,
  isCloseRecord,
  isPassReport,
  RECONCILE_CORROBORATED_TYPE,
  RECONCILE_SUMMARY_TYPE,
  TRANSCRIPT_SOURCE,
} from '../record/close-passes.js';
import type { EventRecord } from '../record/record.js';
import { type PackageFormat, recordLeaf } from './grammar.js';
import { MerkleAccumulator } from './merkle-accumulator.js';
import { PassParts } from './verify-parts.js';

/**
 * What cross-verification needs of the records: the session's first `session.start`, its tool
 * calls (and whether each ran) and permission resolutions, and the session window.
 */
export class CrossRecords {
  readonly records: EventRecord[] = [];
  private first: string | undefined;
  private last: string | undefined;
  private sawStart = false;

  add(record: EventRecord): void {
    this.first ??= record.time;
    this.last = record.time;
    const type = record.event.type;
    if (type === 'session.start' && !this.sawStart) {
      this.sawStart = true;
      this.records.push(record);
    } else if (type === 'tool.before' || type === 'tool.permission.resolved' || type === 'tally.approval')
      this.records.push(record);
    else if (type === 'tool.after') {
      // The call and whether it ran matter here; its output need not be held.
      const { id, time, source, call, tool, execution, outcome } = record.event;
      this.records.push({ ...record, event: { id, type, time, source, call, tool, execution, outcome } });
    }
  }

  window(): { start: string; end: string } {
    return { start: this.first!, end: this.last! };
  }
}

/**
 * Facts about the session as a whole that its signatures and chain do not establish — a key holder
 * can re-sign any log, so these are what make a forged one visible: timestamps that run backwards,
 * no `session.end`, a call id used twice, a call that started and never ended. Memory grows with
 * the number of calls (their ids), not with their content.
 */
export class SessionFacts {
  /** The first record timestamped before the one before it. */
  backwards: { seq: number; time: string; previous: string } | null = null;
  /** The seq of the first `session.end`, if any. */
  end: number | null = null;
  /** The first call id reported twice by the same kind of event. */
  duplicate: { seq: number; call: string; type: string; first: number } | null = null;
  /** Calls whose tool.before was answered by no deny or ask and that have no tool.after yet: key → seq. */
  readonly open = new Map<string, { seq: number; call: string }>();
  /** `tally.log.repaired` records: seq and what each says was set aside. */
  readonly repairs: Array<{ seq: number; repaired: unknown }> = [];
  /** Whether `session.start` recorded a workspace baseline the close reconciles against. */
  baseline = false;
  /** What session.start says of the tree between the previous session's close and this start. */
  since: Record<string, unknown> | null = null;
  /** The first `tally.reconcile.summary`: its seq and what it says of the pass. */
  reconcile: { seq: number; summary: Record<string, unknown> } | null = null;
  /** The reconcile pass's parts and reports: which the summary claims, which no summary does. */
  readonly parts = new PassParts();
  /** The first summary only a close writes recorded under another source: a channel wrote it. */
  foreignSummary: { seq: number; type: string; source: string } | null = null;
  /** What session.start says `tally run` wired: the harness and its events' source. */
  wiring: { harness: string; eventSource: string } | null = null;
  /** Records the wired harness's hooks sent (source `hook`, its event source). */
  harnessEvents = 0;
  /** Calls that ran and that only the agent's transcript shows: no hook reported them. */
  readonly transcriptOnly: number[] = [];
  private readonly seen = new Map<string, number>();
  private previous: { ms: number; time: string } | null = null;

  add(record: EventRecord): void {
    const ms = Date.parse(record.time);
    if (this.backwards === null && this.previous !== null && ms < this.previous.ms)
      this.backwards = { seq: record.seq, time: record.time, previous: this.previous.time };
    this.previous = { ms, time: record.time };
    const event = record.event;
    if (event.type === 'session.end' && this.end === null) this.end = record.seq;
    if (event.type === 'session.start' && record.seq === 0) {
      const workspace = (event.extensions as Record<string, unknown> | undefined)?.['dev.tally.workspace'];
      this.baseline = typeof workspace === 'object' && workspace !== null && 'baseline' in workspace;
      const since = (workspace as { since?: unknown } | undefined)?.since;
      if (typeof since === 'object' && since !== null && !Array.isArray(since))
        this.since = since as Record<string, unknown>;
      const wiring = (event.extensions as Record<string, unknown> | undefined)?.['dev.tally.wiring'] as
        | { harness?: unknown; event_source?: unknown }
        | undefined;
      if (typeof wiring?.harness === 'string' && typeof wiring.event_source === 'string')
        this.wiring = { harness: wiring.harness, eventSource: wiring.event_source };
    }
    if (this.wiring !== null && record.source === 'hook' && event.source === this.wiring.eventSource)
      this.harnessEvents++;
    if (
      record.source === TRANSCRIPT_SOURCE &&
      event.type === 'tool.after' &&
      this.transcriptOnly.length < 100
    ) {
      const seen = (event.extensions as Record<string, unknown> | undefined)?.['dev.tally.transcript'] as
        | { seen_only_in_transcript?: unknown }
        | undefined;
      const execution = event.execution as { status?: unknown } | undefined;
      if (seen?.seen_only_in_transcript === true && execution?.status === 'executed')
        this.transcriptOnly.push(record.seq);
    }
    if (isCloseOnlyType(event.type) && !isCloseRecord(record, event.type))
      this.foreignSummary ??= { seq: record.seq, type: event.type, source: record.source };
    if (isCloseRecord(record, RECONCILE_CORROBORATED_TYPE)) this.parts.part(record);
    if (isPassReport(record)) this.parts.report(record);
    if (isCloseRecord(record, RECONCILE_SUMMARY_TYPE)) this.parts.summary(record);
    if (isCloseRecord(record, RECONCILE_SUMMARY_TYPE) && this.reconcile === null) {
      const summary = (event.extensions as Record<string, unknown> | undefined)?.['dev.tally.reconcile'];
      this.reconcile = {
        seq: record.seq,
        summary: typeof summary === 'object' && summary !== null ? (summary as Record<string, unknown>) : {},
      };
    }
    if (event.type === 'tally.log.repaired' && this.repairs.length < 100) {
      const extensions = event.extensions as Record<string, unknown> | undefined;
      this.repairs.push({ seq: record.seq, repaired: extensions?.['dev.tally.repaired'] ?? null });
    }
    if (event.type !== 'tool.before' && event.type !== 'tool.after') return;
    const call = event.call;
    const id =
      typeof call === 'object' && call !== null && typeof (call as { id?: unknown }).id === 'string'
        ? (call as { id: string }).id
        : undefined;
    if (id === undefined) return;
    const key = `${String(event.source)}\u0000${id}`;
    const typed = `${event.type}\u0000${key}`;
    const first = this.seen.get(typed);
    if (first !== undefined) {
      this.duplicate ??= { seq: record.seq, call: id, type: event.type, first };
      return;
    }
    this.seen.set(typed, record.seq);
    if (event.type === 'tool.after') this.open.delete(key);
    else if (record.decision?.decision !== 'deny' && record.decision?.decision !== 'ask')
      this.open.set(key, { seq: record.seq, call: id });
  }
}

export class RecordFold {
  readonly merkle = new MerkleAccumulator();
  readonly composer = new ReceiptComposer();
  composeError: Error | null = null;
  head: Buffer | null = null;
  readonly cross: CrossRecords | null;
  readonly session = new SessionFacts();
  /** The first record timestamped after `now`, if any. */
  afterNow: { seq: number; time: string } | null = null;
  private readonly nowMs: number;

  constructor(
    private readonly format: PackageFormat,
    now: Date,
    withCross: boolean,
  ) {
    this.nowMs = now.getTime();
    this.cross = withCross ? new CrossRecords() : null;
  }

  add(checked: CheckedRecord): void {
    this.merkle.add(recordLeaf(checked.digest, this.format));
    this.head = checked.digest;
    const record = checked.record;
    if (this.afterNow === null && Date.parse(record.time) > this.nowMs)
      this.afterNow = { seq: record.seq, time: record.time };
    this.cross?.add(record);
    this.session.add(record);
    if (this.composeError !== null) return;
    try {
      this.composer.add(record);
    } catch (error) {
      this.composeError = error as Error;
    }
  }
}
