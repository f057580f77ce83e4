/**
 * What verification keeps while records stream past: the Merkle root (leaves per the package's
 * format), the receipt being recomputed, the chain head, the first record later than `now`, and
 * the few records cross-verification needs. Memory is bounded by the receipt, not by the records.
 */
import type { CheckedRecord } from '../log/reader.js';
import { ReceiptComposer } from '../receipt/receipt.js';
import type { EventRecord } from '../record/record.js';
import { type PackageFormat, recordLeaf } from './grammar.js';
import { MerkleAccumulator } from './merkle-accumulator.js';

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

export class RecordFold {
  readonly merkle = new MerkleAccumulator();
  readonly composer = new ReceiptComposer();
  composeError: Error | null = null;
  head: Buffer | null = null;
  readonly cross: CrossRecords | null;
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
    if (this.composeError !== null) return;
    try {
      this.composer.add(record);
    } catch (error) {
      this.composeError = error as Error;
    }
  }
}
