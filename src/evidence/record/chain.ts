/**
 * The record chain: sequence numbers, `prev` links, encoding and signing — and nothing else. It is
 * pure (no files, no clock): the caller gives each record's time and stores the line it returns.
 * It resumes from a verified last line, so a log on any store continues where it stopped.
 */
import { verifyEnvelope } from '../../core/dsse.js';
import { sha256 } from '../../core/hash.js';
import { toPublicKey } from '../../core/keys.js';
import {
  decodeRecordPayload,
  digestRef,
  encodeRecord,
  MAX_LINE_BYTES,
  parseEnvelopeLine,
  RecordError,
  type Signer,
} from './codec.js';
import {
  type AgentAttribution,
  type BackendAnswer,
  type CanonicalEvent,
  type EventRecord,
  type PolicyDecision,
  RECORD_VERSION,
  type RecordFlag,
  type RecordVersion,
  type ResolvedPath,
  type SessionBinding,
} from './record.js';

export interface AppendInput {
  source: string;
  event: CanonicalEvent;
  agent?: AgentAttribution;
  decision?: PolicyDecision;
  answers?: BackendAnswer[];
  binding?: SessionBinding;
  resolved?: ResolvedPath[];
  flags?: RecordFlag[];
}

/** The last record of a chain: its sequence number and digest (`sha256:<hex>`). */
export interface ChainHead {
  seq: number;
  digest: string;
}

export interface ChainLink {
  record: EventRecord;
  /** The log line: canonical DSSE envelope + "\n". */
  line: Buffer;
  /** `sha256:<hex>` of the canonical payload: the next record's `prev`. */
  digest: string;
}

export interface ChainOptions {
  session: string;
  signer: Signer;
  /** The longest line a record may be (default MAX_LINE_BYTES, the readers' limit). */
  maxLineBytes?: number;
}

export class RecordChain {
  private nextSeq = 0;
  private prev: string | null = null;
  private last: EventRecord | null = null;
  /** A log keeps the record version it started with: a v1 log resumed stays v1. */
  private version: RecordVersion = RECORD_VERSION;

  constructor(private readonly options: ChainOptions) {}

  /**
   * A chain continuing after `lastLine` (null: an empty log). The line must verify with the
   * signer's own key and belong to this session; `where` names the log in errors.
   */
  static resume(lastLine: Buffer | null, options: ChainOptions, where: string): RecordChain {
    const chain = new RecordChain(options);
    if (lastLine === null) return chain;
    try {
      const envelope = parseEnvelopeLine(lastLine);
      const { payload } = verifyEnvelope(envelope, [toPublicKey(options.signer.privateKey)], {
        strict: true,
      });
      const record = decodeRecordPayload(payload);
      if (record.session !== options.session) {
        throw new RecordError(
          'session',
          `log ${where} belongs to session ${record.session}, not ${options.session}`,
        );
      }
      chain.nextSeq = record.seq + 1;
      chain.prev = digestRef(sha256(payload));
      chain.last = record;
      chain.version = record.v;
      return chain;
    } catch (error) {
      if (error instanceof RecordError) throw error;
      throw new RecordError(
        'signature',
        `cannot continue ${where}: its last record does not verify with this key (${(error as Error).message})`,
        undefined,
        { cause: error },
      );
    }
  }

  /** The record version this chain writes. */
  get recordVersion(): RecordVersion {
    return this.version;
  }

  /** Records so far (the next record's seq). */
  get size(): number {
    return this.nextSeq;
  }

  get head(): ChainHead | null {
    return this.prev === null ? null : { seq: this.nextSeq - 1, digest: this.prev };
  }

  /** The last record of the chain, if any. */
  get lastRecord(): EventRecord | null {
    return this.last;
  }

  /**
   * Makes the next record and its signed line, and advances. A record whose line would be longer
   * than the limit is refused before anything changes (no sequence number is used).
   */
  next(input: AppendInput, time: Date): ChainLink {
    const v2 = this.version === 2;
    // Record times never run backwards (the verifier's timestamps_ordered): a clock stepped back
    // dates a record at its predecessor's time.
    const last = this.last === null ? Number.NEGATIVE_INFINITY : Date.parse(this.last.time);
    const at = time.getTime() < last ? new Date(last) : time;
    const record: EventRecord = {
      v: this.version,
      seq: this.nextSeq,
      time: at.toISOString(),
      session: this.options.session,
      source: input.source,
      ...(input.agent ? { agent: input.agent } : {}),
      event: input.event,
      ...(input.decision ? { decision: input.decision } : {}),
      ...(v2 && input.answers && input.answers.length > 0 ? { answers: input.answers } : {}),
      ...(v2 && input.binding ? { binding: input.binding } : {}),
      ...(v2 && input.resolved && input.resolved.length > 0 ? { resolved: input.resolved } : {}),
      ...(v2 && input.flags && input.flags.length > 0 ? { flags: [...new Set(input.flags)].sort() } : {}),
      prev: this.prev,
    };
    const { line, digest } = encodeRecord(record, this.options.signer);
    // Never above what readers accept: a record written must be readable.
    const limit = Math.min(this.options.maxLineBytes ?? MAX_LINE_BYTES, MAX_LINE_BYTES);
    if (line.length - 1 > limit) {
      throw new RecordError(
        'schema',
        `record ${record.seq} would be a ${line.length - 1}-byte line; a log line may hold at most ${limit} bytes (store large content outside the event)`,
        { seq: record.seq, bytes: line.length - 1, limit },
      );
    }
    this.nextSeq += 1;
    this.prev = digestRef(digest);
    this.last = record;
    return { record, line, digest: this.prev };
  }
}
