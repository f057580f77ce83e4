/**
 * What keeps a receipt's size, and its composer's memory, bounded by what a reader needs rather
 * than by the number of records (docs/receipt.md#bounds): the limits, the capped `seqs` lists, and
 * the ledgers that keep the first rows of an unbounded section and summarise the rest with
 * explicit counts. Nothing is dropped silently: every summarised row is counted.
 */
import { compareCodeUnits } from './normalize.js';
import type { DecisionRow, Verdict } from './receipt-calls.js';

/** A `seqs` list holds at most this many sequence numbers (the smallest); `seq_count` says how many there are. */
export const SEQS_MAX = 1000;
/** `decisions` lists the first this-many decisions of each verdict by `seq`; later ones are summarised. */
export const DECISION_ROWS: Readonly<Record<Verdict, number>> = { allow: 1000, ask: 10_000, deny: 10_000 };
/** `processes` lists the first this-many processes by first record; later ones are summarised per command. */
export const PROCESS_ROWS = 1000;
/**
 * The composer holds at most this many calls at once; when a new call would exceed it, the call
 * whose last event is oldest is folded into the receipt and forgotten (docs/receipt.md#calls).
 */
export const CALL_WINDOW = 10_000;

/** A set of sequence numbers, kept sorted; records mostly arrive in order, so adding is usually an append. */
export class SeqSet {
  private readonly values: number[] = [];

  get size(): number {
    return this.values.length;
  }

  get first(): number | undefined {
    return this.values[0];
  }

  get last(): number | undefined {
    return this.values[this.values.length - 1];
  }

  add(seq: number): void {
    const v = this.values;
    const n = v.length;
    if (n === 0 || seq > v[n - 1]!) {
      v.push(seq);
      return;
    }
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (v[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    if (v[lo] !== seq) v.splice(lo, 0, seq);
  }

  addAll(other: SeqSet): void {
    for (const seq of other.values) this.add(seq);
  }

  /** The smallest `SEQS_MAX` sequence numbers. */
  head(): number[] {
    return this.values.slice(0, SEQS_MAX);
  }
}

/** The `seqs` of a row, and `seq_count` only when the list is cut (so short rows are unchanged). */
export function seqFields(seqs: SeqSet): { seqs: number[]; seq_count?: number } {
  return seqs.size > SEQS_MAX ? { seqs: seqs.head(), seq_count: seqs.size } : { seqs: seqs.head() };
}

/** Decisions beyond the listed ones, one row per (decision, by, via, event type, tool, rule). */
export interface DecisionSummaryRow {
  decision: Verdict;
  by: string;
  via: 'record' | 'ahp';
  event_type: string;
  tool?: string;
  rule?: string;
  count: number;
  first_seq: number;
  last_seq: number;
}

export interface DecisionsOmitted {
  count: number;
  groups: DecisionSummaryRow[];
}

/** Decisions arrive in `seq` order; each verdict keeps its first `DECISION_ROWS` rows. */
export class DecisionLedger {
  readonly rows: DecisionRow[] = [];
  readonly totals: Record<Verdict, number> = { allow: 0, ask: 0, deny: 0 };
  private readonly groups = new Map<string, DecisionSummaryRow>();
  private omittedCount = 0;

  add(row: DecisionRow): void {
    const listed = this.totals[row.decision]++;
    if (listed < DECISION_ROWS[row.decision]) {
      this.rows.push(row);
      return;
    }
    this.omittedCount++;
    const key = JSON.stringify([
      row.decision,
      row.by,
      row.via,
      row.event_type,
      row.tool ?? null,
      row.rule ?? null,
    ]);
    const group = this.groups.get(key);
    if (group !== undefined) {
      group.count++;
      group.last_seq = row.seq;
      return;
    }
    const created: DecisionSummaryRow = {
      decision: row.decision,
      by: row.by,
      via: row.via,
      event_type: row.event_type,
      count: 1,
      first_seq: row.seq,
      last_seq: row.seq,
    };
    if (row.tool !== undefined) created.tool = row.tool;
    if (row.rule !== undefined) created.rule = row.rule;
    this.groups.set(key, created);
  }

  omitted(): DecisionsOmitted | undefined {
    if (this.omittedCount === 0) return undefined;
    const groups = [...this.groups.values()].sort(
      (a, b) =>
        compareCodeUnits(a.decision, b.decision) ||
        compareCodeUnits(a.by, b.by) ||
        compareCodeUnits(a.via, b.via) ||
        compareCodeUnits(a.event_type, b.event_type) ||
        compareCodeUnits(a.tool ?? '', b.tool ?? '') ||
        compareCodeUnits(a.rule ?? '', b.rule ?? ''),
    );
    return { count: this.omittedCount, groups };
  }
}
