/**
 * The session log writer: a RecordChain (../record/chain.ts) over a RecordStore (./store.ts). It
 * signs each record as it is appended and resolves once the store has made it durable; the file
 * store's group commit lets concurrent appends share one fdatasync. Opening resumes the chain from
 * the store's last line, verified with the signer's own key.
 */
import { type AppendInput, type ChainHead, RecordChain } from '../record/chain.js';
import type { Signer } from '../record/codec.js';
import type { EventRecord } from '../record/record.js';
import { FileRecordStore, StoreError, type TornTail } from './file-store.js';
import type { HeadFile } from './head-file.js';
import type { RecordStore } from './store.js';

export type { AppendInput, ChainHead, TornTail };

export interface Appended {
  seq: number;
  digest: string;
  record: EventRecord;
}

export interface OpenLogOptions {
  session: string;
  signer: Signer;
  /** Clock for record times; tests inject one. */
  now?: () => Date;
  lockTimeoutMs?: number;
  /** The longest line an append may write (default MAX_LINE_BYTES, the readers' limit). */
  maxLineBytes?: number;
  /** The chain head kept outside the log, checked on open and rewritten once per group commit. */
  head?: HeadFile;
}

export class LogWriter {
  private closed = false;
  /** A failed store write leaves the chain ahead of the store: no further append is accepted. */
  private failure: Error | null = null;

  private constructor(
    readonly path: string,
    private readonly store: RecordStore,
    private readonly chain: RecordChain,
    private readonly now: () => Date,
    /** Set when a torn tail was found and quarantined on open. */
    readonly recovered: TornTail | null,
  ) {}

  /** Opens the log file at `path` (creating it), resuming its chain. */
  static async open(path: string, options: OpenLogOptions): Promise<LogWriter> {
    const store = await FileRecordStore.open(path, {
      ...(options.lockTimeoutMs ? { lockTimeoutMs: options.lockTimeoutMs } : {}),
      ...(options.head ? { head: options.head } : {}),
    });
    try {
      return LogWriter.over(store, options, path, store.recovered);
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  /** A writer over any store, resuming from its last line. */
  static over(
    store: RecordStore,
    options: OpenLogOptions,
    where = 'the log',
    recovered: TornTail | null = null,
  ): LogWriter {
    const chain = RecordChain.resume(store.lastLine(), options, where);
    return new LogWriter(where, store, chain, options.now ?? (() => new Date()), recovered);
  }

  get size(): number {
    return this.chain.size;
  }

  /** The record version this log holds (v1 logs opened before the v2 format stay v1). */
  get recordVersion(): 1 | 2 {
    return this.chain.recordVersion;
  }

  get head(): ChainHead | null {
    return this.chain.head;
  }

  /** The last record appended (or found on disk at open), if any. */
  get lastRecord(): EventRecord | null {
    return this.chain.lastRecord;
  }

  /** Signs and appends one record; resolves once it is durable. */
  append(input: AppendInput): Promise<Appended> {
    if (this.closed) return Promise.reject(new StoreError('closed', `log ${this.path} is closed`));
    if (this.failure) return Promise.reject(this.failure);
    let link: ReturnType<RecordChain['next']>;
    try {
      link = this.chain.next(input, this.now());
    } catch (error) {
      return Promise.reject(error);
    }
    const appended: Appended = { seq: link.record.seq, digest: link.digest, record: link.record };
    return this.store.append([link.line]).then(
      () => appended,
      (error: Error) => {
        this.failure ??= error;
        throw error;
      },
    );
  }

  /** Waits for every pending append, then releases the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.store.close();
  }
}
