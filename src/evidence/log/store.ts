/**
 * Where a record chain's lines live. A store appends whole lines and is durable before it
 * resolves; it knows nothing of records, keys or sequence numbers (./writer.ts joins it to a
 * RecordChain). The file store (./file-store.ts) is the one sessions use; the memory store serves
 * tests and anything that seals in memory.
 */

export interface RecordStore {
  /**
   * Appends the lines (each ends with "\n"); resolves once they are durable. `head`: the seq and
   * digest of the last line's record, when the caller knows it (a store keeping a chain head
   * then need not read it back from the line). After a failed append every later one fails too
   * (appends already queued included): a store that went on would leave a gap in the chain.
   */
  append(lines: readonly Buffer[], head?: { seq: number; digest: string }): Promise<void>;
  /** The last complete line (without its "\n"), or null for an empty store. */
  lastLine(): Buffer | null;
  /** Every complete line from the `fromLine`-th (0-based) on, in order, without "\n". */
  lines(fromLine?: number): AsyncIterable<Buffer>;
  /** Waits for pending appends, then releases the store. Idempotent. */
  close(): Promise<void>;
}

/** A store in memory: durable for as long as the process lives. */
export class MemoryRecordStore implements RecordStore {
  private readonly held: Buffer[] = [];
  private closed = false;

  async append(lines: readonly Buffer[]): Promise<void> {
    if (this.closed) throw new Error('the store is closed');
    for (const line of lines) this.held.push(Buffer.from(line.subarray(0, line.length - 1)));
  }

  lastLine(): Buffer | null {
    return this.held[this.held.length - 1] ?? null;
  }

  async *lines(fromLine = 0): AsyncIterable<Buffer> {
    for (let i = fromLine; i < this.held.length; i++) yield this.held[i]!;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
