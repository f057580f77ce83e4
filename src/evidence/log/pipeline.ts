/**
 * Checks record lines in order, on this thread or on a pool of worker threads. Either way the same
 * `checkLine` runs on every line and `ChainVerifier.accept` runs on the main thread in record order,
 * so both give the same records, the same first failure and the same offsets. With workers, lines
 * go out in batches and come back as verified payloads; the main thread only decodes them (JSON)
 * and checks session, sequence and chain. In-flight batches are bounded, so memory is too.
 *
 * The byte buffers that carry batches are recycled between the threads rather than allocated per
 * batch: a dead buffer is only freed when its thread next collects garbage, and each thread lets
 * tens of megabytes of such memory pile up first, so fresh buffers would make memory grow with
 * the size of the package. A worker hands each request's buffer back with its result; the main
 * thread hands each result's buffer back with a later request.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { rawPublicKey } from '../../core/keys.js';
import type { RecordCheck } from '../record/codec.js';
import type { EventRecord } from '../record/record.js';
import { asLogIssue, type ChainVerifier, type CheckedRecord, type LogIssue } from './reader.js';

/** Below this many records a pool costs more to start than it saves. */
export const POOL_THRESHOLD = 2000;
const BATCH_LINES = 256;
/**
 * A worker keeps nothing between batches, so a small young generation suffices: its garbage is
 * collected often and cheaply instead of growing the worker's heap to V8's default (tens of MB).
 */
const WORKER_YOUNG_GENERATION_MB = 8;
const BATCHES_PER_WORKER = 4;

export interface BatchRequest {
  id: number;
  /** The lines, back to back; the buffer may be longer than they are. */
  lines: Uint8Array;
  /** End offset of each line within `lines`. */
  ends: Uint32Array;
  /** Buffers of earlier results, handed back for the worker to reuse. */
  returned: Uint8Array[];
}

export interface BatchResult {
  id: number;
  /** The digests (32 bytes each), then the payloads back to back; the buffer may be longer. */
  data: Uint8Array;
  /** End offset of each payload, counted from the end of the digests. */
  payloadEnds: Uint32Array;
  /** Verified key ids per record, joined by "\n". */
  keyIds: string[];
  failure?: { index: number; check: RecordCheck; message: string };
  /** The request's `lines` buffer, handed back for reuse. */
  spare: Uint8Array;
}

/** Spare buffers a thread keeps for reuse, at most. */
export const SPARE_BUFFERS = 8;

/**
 * A spare buffer of at least `size` bytes, taken from `spares`, else a new one with some headroom
 * (so that the next, slightly larger, batch fits too).
 */
export function takeBuffer(spares: Uint8Array[], size: number): Uint8Array {
  const at = spares.findIndex((b) => b.byteLength >= size);
  if (at >= 0) return spares.splice(at, 1)[0]!;
  if (spares.length >= SPARE_BUFFERS) spares.shift();
  return new Uint8Array(size + (size >>> 2));
}

export interface PipelineOptions {
  chain: ChainVerifier;
  /** Worker threads; 0 checks every line on this thread. */
  workers: number;
  /** Called with each record that passed every check, in order. */
  onRecord: (checked: CheckedRecord) => void;
}

/** Workers to use when the caller did not say: every core, unless the job is small. */
export function defaultWorkers(expectedRecords: number): number {
  return expectedRecords >= POOL_THRESHOLD ? Math.max(1, availableParallelism()) : 0;
}

export interface RecordPipeline {
  /** Queues the next record line (it may be checked later); resolves when there is room for more. */
  push(line: Buffer, offset: number): Promise<void> | undefined;
  /** Waits for every queued line; returns the first failure in record order, if any. */
  drain(): Promise<LogIssue | null>;
  /** True once a failure has been seen: further lines are ignored. */
  readonly failed: boolean;
  close(): Promise<void>;
}

export function createPipeline(options: PipelineOptions): RecordPipeline {
  return options.workers > 0 ? new PoolPipeline(options) : new InlinePipeline(options);
}

class InlinePipeline implements RecordPipeline {
  private issue: LogIssue | null = null;
  constructor(private readonly options: PipelineOptions) {}

  get failed(): boolean {
    return this.issue !== null;
  }

  push(line: Buffer, offset: number): undefined {
    if (this.issue !== null) return;
    try {
      this.options.onRecord(this.options.chain.check(line, offset));
    } catch (error) {
      this.issue = asLogIssue(error);
      if (this.issue === null) throw error;
    }
  }

  async drain(): Promise<LogIssue | null> {
    return this.issue;
  }

  async close(): Promise<void> {}
}

interface InFlight {
  result: Promise<BatchResult>;
  offsets: number[];
}

class PoolPipeline implements RecordPipeline {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<
    number,
    { resolve: (r: BatchResult) => void; reject: (e: Error) => void }
  >();
  private readonly inFlight: InFlight[] = [];
  private lines: Buffer[] = [];
  private offsets: number[] = [];
  private nextId = 0;
  private issue: LogIssue | null = null;
  private crashed: Error | null = null;
  /** Request buffers the workers handed back. */
  private readonly spareLines: Uint8Array[] = [];
  /** Result buffers already read, to hand back with the next request. */
  private returnable: Uint8Array[] = [];

  constructor(private readonly options: PipelineOptions) {
    const keys = [...options.chain.trusted.byId.values()].map((k) => new Uint8Array(rawPublicKey(k)));
    for (let i = 0; i < options.workers; i++) {
      const worker = new Worker(new URL('./verify-worker.js', import.meta.url), {
        workerData: { keys },
        resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
      });
      worker.on('message', (result: BatchResult) => {
        if (this.spareLines.length < SPARE_BUFFERS) this.spareLines.push(result.spare);
        const waiter = this.waiting.get(result.id);
        this.waiting.delete(result.id);
        waiter?.resolve(result);
      });
      worker.on('error', (error) => this.fail(error));
      this.workers.push(worker);
    }
  }

  get failed(): boolean {
    return this.issue !== null;
  }

  private fail(error: Error): void {
    this.crashed = error;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }

  push(line: Buffer, offset: number): Promise<void> | undefined {
    if (this.issue !== null) return;
    this.lines.push(line);
    this.offsets.push(offset);
    if (this.lines.length < BATCH_LINES) return;
    this.dispatch();
    if (this.inFlight.length >= this.workers.length * BATCHES_PER_WORKER) return this.settleOne();
    return;
  }

  private dispatch(): void {
    if (this.lines.length === 0) return;
    const total = this.lines.reduce((n, l) => n + l.length, 0);
    const packed = takeBuffer(this.spareLines, total);
    const ends = new Uint32Array(this.lines.length);
    let at = 0;
    this.lines.forEach((l, i) => {
      packed.set(l, at);
      at += l.length;
      ends[i] = at;
    });
    const id = this.nextId++;
    const returned = this.returnable;
    this.returnable = [];
    const request: BatchRequest = { id, lines: packed, ends, returned };
    const result = new Promise<BatchResult>((resolve, reject) => {
      if (this.crashed) return reject(this.crashed);
      this.waiting.set(id, { resolve, reject });
    });
    result.catch(() => {}); // observed when settled in order
    this.workers[id % this.workers.length]!.postMessage(request, [
      packed.buffer as ArrayBuffer,
      ends.buffer,
      ...returned.map((b) => b.buffer as ArrayBuffer),
    ]);
    this.inFlight.push({ result, offsets: this.offsets });
    this.lines = [];
    this.offsets = [];
  }

  /** Takes the oldest batch's results, in order, through the chain checks. */
  private async settleOne(): Promise<void> {
    const head = this.inFlight.shift();
    if (head === undefined) return;
    const result = await head.result;
    if (this.issue !== null) return;
    const { chain, onRecord } = this.options;
    const data = Buffer.from(result.data.buffer, result.data.byteOffset, result.data.byteLength);
    const digests = data.subarray(0, result.payloadEnds.length * 32);
    const payloads = data.subarray(digests.length);
    let start = 0;
    try {
      for (let i = 0; i < result.payloadEnds.length; i++) {
        const end = result.payloadEnds[i]!;
        // The worker has checked these bytes are canonical JSON of a well-formed record.
        const record = JSON.parse(payloads.toString('utf8', start, end)) as EventRecord;
        start = end;
        const digest = Buffer.from(digests.subarray(i * 32, i * 32 + 32));
        onRecord(chain.accept(record, digest, result.keyIds[i]!.split('\n'), head.offsets[i]!));
      }
      if (result.failure !== undefined) {
        const { index, check, message } = result.failure;
        chain.reject(check, message, head.offsets[index]!);
      }
    } catch (error) {
      this.issue = asLogIssue(error);
      if (this.issue === null) throw error;
    }
    // Everything read from the buffer has been copied out (strings, digests): it can go back.
    if (this.returnable.length < SPARE_BUFFERS) this.returnable.push(result.data);
  }

  async drain(): Promise<LogIssue | null> {
    if (this.issue === null) this.dispatch();
    while (this.inFlight.length > 0) await this.settleOne();
    return this.issue;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
