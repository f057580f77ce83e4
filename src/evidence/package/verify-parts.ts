/**
 * What verification keeps of the reconcile pass's `tally.reconcile.corroborated` parts while records
 * stream past: which attempt each names, and its number, until the first summary says which are its
 * own. The receipt reads only those (receipt/reconcile-parts.ts); a summary that counts parts the
 * records do not hold once each, or a part it counts that does not count the same, is a log the
 * close did not write. Parts no summary claims are a close that died before its summary: kept in
 * the log, listed, never read.
 */
import { reconcileAttempt, reconcileBody } from '../receipt/reconcile-parts.js';
import type { EventRecord } from '../record/record.js';

/** Unclaimed parts listed at most; the count is always whole. */
const UNCLAIMED_LISTED = 100;

interface Part {
  seq: number;
  part: unknown;
  parts: unknown;
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

/**
 * The parts of one session's log as the first summary sorts them: its own (checked against what it
 * counts), and those no summary claims.
 */
export class PassParts {
  /** Parts that name an attempt, by attempt, until the first summary. */
  private readonly held = new Map<string, Part[]>();
  private summarised = false;
  /** Parts no summary claims: the first seqs, and how many. */
  readonly unclaimed: { seqs: number[]; count: number } = { seqs: [], count: 0 };
  mismatch: PartsMismatch | null = null;

  /** A `tally.reconcile.corroborated` the close wrote. One that names no attempt is an earlier version's. */
  part(record: EventRecord): void {
    const attempt = reconcileAttempt(record);
    if (attempt === undefined) return;
    if (this.summarised) {
      this.unclaim(record.seq);
      return;
    }
    const body = reconcileBody(record);
    const part = { seq: record.seq, part: body.part, parts: body.parts };
    const list = this.held.get(attempt);
    if (list === undefined) this.held.set(attempt, [part]);
    else list.push(part);
  }

  /** The first `tally.reconcile.summary` the close wrote: the parts of its attempt are its own. */
  summary(record: EventRecord): void {
    if (this.summarised) return;
    this.summarised = true;
    const attempt = reconcileAttempt(record);
    for (const [other, parts] of this.held)
      if (other !== attempt) for (const part of parts) this.unclaim(part.seq);
    // An earlier version's summary names no attempt: its parts are read as they always were.
    if (attempt === undefined) return;
    const claimed = this.held.get(attempt) ?? [];
    const counted = reconcileBody(record).corroborated_parts;
    const expected =
      typeof counted === 'number' && Number.isSafeInteger(counted) && counted > 1 ? counted - 1 : 0;
    // Parts 2 to expected + 1 (the summary is the first), each once, each counting as the summary.
    const numbers = new Set(claimed.map((p) => p.part));
    const whole =
      claimed.length === expected &&
      numbers.size === expected &&
      claimed.every(
        (p) =>
          p.parts === expected + 1 && typeof p.part === 'number' && p.part >= 2 && p.part <= expected + 1,
      );
    if (!whole)
      this.mismatch = {
        seq: record.seq,
        attempt,
        expected,
        count: claimed.length,
        found: claimed.slice(0, UNCLAIMED_LISTED).map((p) => ({ seq: p.seq, part: p.part })),
      };
  }

  private unclaim(seq: number): void {
    this.unclaimed.count++;
    if (this.unclaimed.seqs.length < UNCLAIMED_LISTED) this.unclaimed.seqs.push(seq);
  }
}
