/**
 * What verification keeps of the reconcile pass's records before its summary while records stream
 * past: its `tally.reconcile.corroborated` parts (which attempt each names, and its number) and its
 * `file.changed` reports (which attempt each names), until the first summary says which are its
 * own. The receipt reads only those (receipt/reconcile-parts.ts); a summary that counts parts the
 * records do not hold once each, or reports the records do not hold, is a log the close did not
 * write. Reports and parts no summary claims are a close that died before its summary: kept in
 * the log, listed, never read.
 */
import { reconcileAttempt, reconcileBody } from '../receipt/reconcile-parts.js';
import type { EventRecord } from '../record/record.js';

/** Unclaimed records listed at most; the count is always whole. */
const UNCLAIMED_LISTED = 100;

interface Part {
  seq: number;
  part: unknown;
  parts: unknown;
}

/** Records of one kind: the first seqs, and how many. */
export interface Listed {
  seqs: number[];
  count: number;
}

/** A summary that counts parts the records before it do not hold, each once. */
export interface PartsMismatch {
  seq: number;
  attempt: string;
  /** The parts the summary counts besides itself (`corroborated_parts` − 1). */
  expected: number;
  /** The parts of its attempt before it: how many, and the first with the number each says it is. */
  count: number;
  found: Array<{ seq: number; part: unknown }>;
}

/** A summary whose `reported` is not how many reports of its attempt the records before it hold. */
export interface ReportsMismatch {
  seq: number;
  attempt: string;
  expected: number;
  count: number;
  /** The first of them. */
  seqs: number[];
}

function listed(): Listed {
  return { seqs: [], count: 0 };
}

function list(into: Listed, seq: number): void {
  into.count++;
  if (into.seqs.length < UNCLAIMED_LISTED) into.seqs.push(seq);
}

/**
 * The parts and reports of one session's log as the first summary sorts them: its own (checked
 * against what it counts), and those no summary claims.
 */
export class PassParts {
  /** Parts that name an attempt, by attempt, until the first summary. */
  private readonly held = new Map<string, Part[]>();
  /** Reports that name an attempt, by attempt, until the first summary: a count and the first seqs. */
  private readonly reports = new Map<string, Listed>();
  private summarised = false;
  /** Parts no summary claims. */
  readonly unclaimed = listed();
  /** Reports no summary claims. */
  readonly unclaimedReports = listed();
  mismatch: PartsMismatch | null = null;
  reportsMismatch: ReportsMismatch | null = null;

  /** A `tally.reconcile.corroborated` the close wrote. One that names no attempt is an earlier version's. */
  part(record: EventRecord): void {
    const attempt = this.heldFor(record, this.unclaimed);
    if (attempt === undefined) return;
    const body = reconcileBody(record);
    const part = { seq: record.seq, part: body.part, parts: body.parts };
    const parts = this.held.get(attempt);
    if (parts === undefined) this.held.set(attempt, [part]);
    else parts.push(part);
  }

  /** A `file.changed` the pass wrote. One that names no attempt is an earlier version's. */
  report(record: EventRecord): void {
    const attempt = this.heldFor(record, this.unclaimedReports);
    if (attempt === undefined) return;
    let reports = this.reports.get(attempt);
    if (reports === undefined) {
      reports = listed();
      this.reports.set(attempt, reports);
    }
    list(reports, record.seq);
  }

  /** The first `tally.reconcile.summary` the close wrote: the parts and reports of its attempt are its own. */
  summary(record: EventRecord): void {
    if (this.summarised) return;
    this.summarised = true;
    const attempt = reconcileAttempt(record);
    for (const [other, parts] of this.held)
      if (other !== attempt) for (const part of parts) list(this.unclaimed, part.seq);
    for (const [other, reports] of this.reports)
      if (other !== attempt) {
        for (const seq of reports.seqs) list(this.unclaimedReports, seq);
        // Past those listed, only the count.
        this.unclaimedReports.count += reports.count - reports.seqs.length;
      }
    // An earlier version's summary names no attempt: its parts and reports are read as they always were.
    if (attempt === undefined) return;
    this.checkParts(record, attempt);
    const body = reconcileBody(record);
    const claimed = this.reports.get(attempt) ?? listed();
    const expected = count(body.reported);
    if (claimed.count !== expected)
      this.reportsMismatch = { seq: record.seq, attempt, expected, count: claimed.count, seqs: claimed.seqs };
  }

  /**
   * The attempt to hold a record of the pass under until the summary, or none: it names no attempt
   * (read where it stands), or it comes after the summary and is none of its own (`unclaimed`).
   */
  private heldFor(record: EventRecord, unclaimed: Listed): string | undefined {
    const attempt = reconcileAttempt(record);
    if (attempt === undefined || !this.summarised) return attempt;
    list(unclaimed, record.seq);
    return undefined;
  }

  /** Parts 2 to expected + 1 (the summary is the first), each once, each counting as the summary. */
  private checkParts(record: EventRecord, attempt: string): void {
    const claimed = this.held.get(attempt) ?? [];
    const counted = count(reconcileBody(record).corroborated_parts);
    const expected = counted > 1 ? counted - 1 : 0;
    const numbers = new Set(claimed.map((p) => p.part));
    const ok =
      claimed.length === expected &&
      numbers.size === expected &&
      claimed.every(
        (p) =>
          p.parts === expected + 1 && typeof p.part === 'number' && p.part >= 2 && p.part <= expected + 1,
      );
    if (!ok)
      this.mismatch = {
        seq: record.seq,
        attempt,
        expected,
        count: claimed.length,
        found: claimed.slice(0, UNCLAIMED_LISTED).map((p) => ({ seq: p.seq, part: p.part })),
      };
  }
}

/** A count a summary gives, or 0 when it gives none that is whole. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}
