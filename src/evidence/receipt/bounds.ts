/**
 * What keeps a receipt's size, and its composer's memory, bounded by what a reader needs rather
 * than by the number of records (docs/receipt.md#bounds): the limits, the capped `seqs` lists, and
 * the ledgers that keep the first rows of an unbounded section and summarise the rest with
 * explicit counts. Nothing is dropped silently: every summarised row is counted.
 */
import { compareCodeUnits } from '../normalize.js';
import { type GroupsOmitted, KeptGroups } from './groups.js';
import type { DecisionRow, Verdict } from './types.js';

/** A `seqs` list holds at most this many sequence numbers (the smallest); `seq_count` says how many there are. */
export const SEQS_MAX = 1000;
/** `decisions` lists the first this-many decisions of each verdict by `seq`; later ones are summarised. */
export const DECISION_ROWS: Readonly<Record<Verdict, number>> = { allow: 1000, ask: 10_000, deny: 10_000 };
/** `processes` lists the first this-many processes by first record; later ones are summarised per command. */
export const PROCESS_ROWS = 1000;
/**
 * A command in `processes` (rows and summaries) is kept to this many UTF-16 code units; the
 * rest is replaced by a marker that says how much was cut, so one row's size does not grow with
 * its command's length.
 */
export const TEXT_MAX = 4096;

/**
 * `text`, or its first TEXT_MAX code units (never splitting a surrogate pair) and
 * ` … [N more characters]`, N counted in code units.
 */
export function clipText(text: string, max = TEXT_MAX): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose pair would be cut off
  return `${text.slice(0, end)} … [${text.length - end} more characters]`;
}

/**
 * The composer holds at most this many open calls (no `tool.after` yet) and this many ended ones;
 * when either bound is exceeded, the least recently active call of that kind is folded into the
 * receipt and forgotten (docs/receipt.md#calls-in-progress).
 */
export const CALL_WINDOW = { open: 10_000, ended: 1000 } as const;

/**
 * Adds `seq` to an ascending list of distinct sequence numbers. Records mostly arrive in order, so
 * this is usually an append.
 */
export function addSeq(sorted: number[], seq: number): void {
  const n = sorted.length;
  if (n === 0 || seq > sorted[n - 1]!) {
    sorted.push(seq);
    return;
  }
  const at = lowerBound(sorted, n, seq);
  if (sorted[at] !== seq) sorted.splice(at, 0, seq);
}

/** The first index below `n` whose value is not less than `seq` (`n` when there is none). */
function lowerBound(sorted: ArrayLike<number>, n: number, seq: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * An ascending set of sequence numbers in a typed array: four bytes a number (eight past 2^32),
 * because a row's witnesses grow with the session even though the receipt shows at most 1,000.
 */
export class SeqList implements Iterable<number> {
  private values: Uint32Array | Float64Array = new Uint32Array(4);
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(seq: number): void {
    const n = this.count;
    let v = this.values;
    if (n > 0 && seq <= v[n - 1]!) {
      const lo = lowerBound(v, n, seq);
      if (v[lo] === seq) return;
      v = this.room(seq);
      v.copyWithin(lo + 1, lo, n);
      v[lo] = seq;
    } else {
      v = this.room(seq);
      v[n] = seq;
    }
    this.count = n + 1;
  }

  /** The backing array, with room for one more number as large as `seq`. */
  private room(seq: number): Uint32Array | Float64Array {
    const v = this.values;
    const wide = seq > 0xffffffff && v instanceof Uint32Array;
    if (this.count < v.length && !wide) return v;
    const size = this.count < v.length ? v.length : v.length * 2;
    const next = wide || v instanceof Float64Array ? new Float64Array(size) : new Uint32Array(size);
    next.set(v.subarray(0, this.count));
    this.values = next;
    return next;
  }

  /** The smallest `max` numbers. */
  head(max: number): number[] {
    return Array.from(this.values.subarray(0, Math.min(max, this.count)));
  }

  *[Symbol.iterator](): Iterator<number> {
    for (let i = 0; i < this.count; i++) yield this.values[i]!;
  }
}

/** The `seqs` of a row (ascending, distinct), and `seq_count` only when the list is cut. */
export function seqFields(sorted: SeqList | readonly number[]): { seqs: number[]; seq_count?: number } {
  const size = sorted instanceof SeqList ? sorted.size : sorted.length;
  const seqs = sorted instanceof SeqList ? sorted.head(SEQS_MAX) : sorted.slice(0, SEQS_MAX);
  return size > SEQS_MAX ? { seqs, seq_count: size } : { seqs };
}

/** Who witnessed something: the records (ascending `seq`s), their sources and their agents. */
export interface WitnessSet {
  readonly seqs: Iterable<number>;
  readonly sources: Iterable<string>;
  readonly agents: Iterable<string>;
}

/** The witnesses of one receipt row, gathered from every record and call that saw it. */
export class Witnesses implements WitnessSet {
  readonly seqs = new SeqList();
  readonly sources = new Set<string>();
  readonly agents = new Set<string>();

  add(seq: number, source: string, agent: string | undefined): void {
    this.seqs.add(seq);
    this.sources.add(source);
    if (agent !== undefined) this.agents.add(agent);
  }

  join(other: WitnessSet): void {
    for (const seq of other.seqs) this.seqs.add(seq);
    for (const source of other.sources) this.sources.add(source);
    for (const agent of other.agents) this.agents.add(agent);
  }
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
  /** The decisions of the groups past GROUPS_MAX in `groups` order (./receipt-groups.ts). */
  groups_omitted?: GroupsOmitted;
}

function decisionOrder(a: DecisionSummaryRow, b: DecisionSummaryRow): number {
  return (
    compareCodeUnits(a.decision, b.decision) ||
    compareCodeUnits(a.by, b.by) ||
    compareCodeUnits(a.via, b.via) ||
    compareCodeUnits(a.event_type, b.event_type) ||
    compareCodeUnits(a.tool ?? '', b.tool ?? '') ||
    compareCodeUnits(a.rule ?? '', b.rule ?? '')
  );
}

/** Decisions arrive in `seq` order; each verdict keeps its first `DECISION_ROWS` rows. */
export class DecisionLedger {
  readonly rows: DecisionRow[] = [];
  readonly totals: Record<Verdict, number> = { allow: 0, ask: 0, deny: 0 };
  private readonly groups = new KeptGroups<DecisionSummaryRow>(decisionOrder);
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
    const group = this.groups.group(key, () => {
      const created: DecisionSummaryRow = {
        decision: row.decision,
        by: row.by,
        via: row.via,
        event_type: row.event_type,
        count: 0,
        first_seq: row.seq,
        last_seq: row.seq,
      };
      if (row.tool !== undefined) created.tool = row.tool;
      if (row.rule !== undefined) created.rule = row.rule;
      return created;
    });
    if (group === undefined) {
      this.groups.countRest(1, row.seq, row.seq);
      return;
    }
    // Decisions arrive in `seq` order: the group's first is set when it is made.
    group.count++;
    group.last_seq = row.seq;
  }

  omitted(): DecisionsOmitted | undefined {
    if (this.omittedCount === 0) return undefined;
    const { groups, groups_omitted } = this.groups.result();
    return groups_omitted === undefined
      ? { count: this.omittedCount, groups }
      : { count: this.omittedCount, groups, groups_omitted };
  }
}
