/**
 * The live witness: the recorder sends the signed head of a running session's chain every N
 * records, and the hub logs it. Later, `witnessConsistency` (./witness-check.ts) checks that the
 * sealed package extends every head that was witnessed, so records dropped or rewritten after a
 * head was sent are caught.
 */
import { canonicalize } from '../core/canonical.js';
import { type Envelope, signEnvelope } from '../core/dsse.js';
import { hubJson, hubUrl, type ShipKey } from './http.js';
import { CHAIN_HEAD_TYPE, type ChainHeadStatement, HEAD_PAYLOAD_TYPE } from './wire.js';

/** The signed head statement for the record at `seq` whose digest is `recordDigest`. */
export function signChainHead(signer: ShipKey, head: Omit<ChainHeadStatement, 'type'>): Envelope {
  const payload: ChainHeadStatement = { type: CHAIN_HEAD_TYPE, ...head };
  return signEnvelope(canonicalize(payload), HEAD_PAYLOAD_TYPE, {
    privateKey: signer.privateKey,
    keyid: signer.keyId,
  });
}

/** Sends one chain head to the hub (`--witness URL`); resolves with its log index. */
export async function sendChainHead(
  hub: string,
  signer: ShipKey,
  head: Omit<ChainHeadStatement, 'type'>,
): Promise<{ status: string; log_index: number }> {
  const envelope = signChainHead(signer, head);
  const { json } = await hubJson<{ status: string; log_index: number }>(
    hubUrl(hub, `/v1/sessions/${encodeURIComponent(head.session)}/heads`),
    { method: 'POST', body: Buffer.from(canonicalize(envelope)), signer },
  );
  return json;
}

export interface Witness {
  /** Tell the witness a record was appended; the first it is told of and every `every`-th are sent. */
  record(seq: number, recordDigest: string, time: Date): void;
  /**
   * Sends the last head not yet sent and waits for everything in flight, at most `timeoutMs`;
   * resolves with the failures (heads still unsent by then are one more).
   */
  flush(timeoutMs?: number): Promise<Error[]>;
}

/** Heads waiting for a slow hub, at most: past it, new heads are counted as dropped, not queued. */
const MAX_QUEUED_HEADS = 1024;

/**
 * A witness for the recorder: heads go out in order, one request at a time, off the recording
 * path (a slow or unreachable hub never delays an append); failures are collected, not thrown.
 */
export function createWitness(options: {
  hub: string;
  signer: ShipKey;
  session: string;
  every: number;
  /** Settles before the first head is sent (the ship's registration); a failure is one of `flush`'s. */
  ready?: Promise<unknown>;
}): Witness {
  const failures: Error[] = [];
  let chain: Promise<void> = (options.ready ?? Promise.resolve()).then(
    () => undefined,
    (error: Error) => {
      failures.push(error);
    },
  );
  let pending: Omit<ChainHeadStatement, 'type'> | null = null;
  let lastSent = -1;
  let queued = 0;
  let dropped = 0;
  const send = (head: Omit<ChainHeadStatement, 'type'>) => {
    lastSent = head.seq;
    if (queued >= MAX_QUEUED_HEADS) {
      dropped++;
      return;
    }
    queued++;
    chain = chain.then(() =>
      sendChainHead(options.hub, options.signer, head).then(
        () => {
          queued--;
        },
        (error: Error) => {
          queued--;
          failures.push(error);
        },
      ),
    );
  };
  return {
    record(seq, recordDigest, time) {
      const head = { session: options.session, seq, digest: recordDigest, time: time.toISOString() };
      if (lastSent < 0 || seq - lastSent >= options.every) {
        pending = null;
        send(head);
      } else pending = head;
    },
    async flush(timeoutMs = 15_000) {
      if (pending) send(pending);
      pending = null;
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        chain.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      const out = failures.splice(0);
      if (dropped > 0) out.push(new Error(`${dropped} heads were dropped while the hub was slow`));
      if (late) out.push(new Error(`${queued} heads were still unsent after ${timeoutMs} ms`));
      dropped = 0;
      return out;
    },
  };
}
