/**
 * One intercept call under its subscription deadline (AHP-FAIL-002). The deadline starts when the
 * call starts and covers connect, authentication, transmission and the answer; the transport gets
 * it as an AbortSignal. Connection failures are retried with the identical request (same JSON-RPC
 * id, same event id, same bytes) only while the deadline still has room. An answer that arrives
 * after the deadline or after an interruption is ignored; one a transport hands over inside the
 * deadline's abort (the stdio binding's held-back answer with another id) is taken, so that it is
 * rejected for its id rather than reported as a bare timeout.
 */

import { getEventListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { BackendTransport, JsonRpcRequest } from '../transports/transport.js';
import { TransportError } from '../transports/transport.js';

export type CallResult =
  | { kind: 'response'; response: unknown; attempts: number }
  | { kind: 'failed'; reason: string; attempts: number }
  | { kind: 'interrupted'; attempts: number };

export interface CallOptions {
  timeoutMs: number;
  interrupt?: AbortSignal | undefined;
  maxAttempts: number;
  retryDelayMs: number;
}

/** JSON-RPC `backend_unavailable`: the backend asks to be tried again. */
const BACKEND_UNAVAILABLE = -32003;

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new TransportError('timeout', 'aborted');
}

/**
 * Deadline controllers of finished calls, kept for the next call: creating an AbortSignal costs
 * several microseconds, a large share of one in-process intercept. Only a controller whose signal
 * never aborted and has no listener left is kept, so a later call cannot reach an earlier one's
 * work; an aborted signal (a deadline or an interruption) is never reused.
 */
const spareControllers: AbortController[] = [];
const MAX_SPARE_CONTROLLERS = 16;

function takeController(): AbortController {
  return spareControllers.pop() ?? new AbortController();
}

function giveBack(controller: AbortController): void {
  if (
    !controller.signal.aborted &&
    spareControllers.length < MAX_SPARE_CONTROLLERS &&
    getEventListeners(controller.signal, 'abort').length === 0
  ) {
    spareControllers.push(controller);
  }
}

function retryableAnswer(response: unknown): boolean {
  if (typeof response !== 'object' || response === null) return false;
  const error = (response as { error?: unknown }).error;
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === BACKEND_UNAVAILABLE
  );
}

/** A point in `performance.now()` time, and what happens when it passes. */
interface Deadline {
  readonly due: number;
  expire(): void;
}

/**
 * The deadlines of the calls in flight, on one Node timer armed for the earliest. Starting and
 * ending a deadline is a set entry, not a timer: a timer per call (set, then cleared a few hundred
 * microseconds later) cost more than half a microsecond of each intercept. The timer keeps the
 * process alive only while some deadline is pending (it is unreferenced when none is); when it
 * fires early or for a deadline already ended, it re-arms for the earliest pending one, so a run
 * of calls costs about one timer per timeout period.
 */
class DeadlineClock {
  private readonly live = new Set<Deadline>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;

  add(deadline: Deadline): void {
    this.live.add(deadline);
    if (this.timer === undefined || deadline.due < this.armedFor) this.arm(deadline.due);
    else if (this.live.size === 1) this.timer.ref();
  }

  end(deadline: Deadline): void {
    if (this.live.delete(deadline) && this.live.size === 0) this.timer?.unref();
  }

  private arm(due: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = due;
    this.timer = setTimeout(this.tick, Math.max(0, Math.ceil(due - performance.now())));
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    const expired: Deadline[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of this.live) {
      if (deadline.due <= now) expired.push(deadline);
      else if (deadline.due < next) next = deadline.due;
    }
    for (const deadline of expired) this.live.delete(deadline);
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    // Expired last, in the order they were due (a late tick can find several): an expiry that
    // starts another call arms the clock through `add`.
    expired.sort((a, b) => a.due - b.due);
    for (const deadline of expired) deadline.expire();
  };
}

const clock = new DeadlineClock();

/**
 * A signal that aborts after `ms` with a timeout TransportError, on the shared clock: a pending
 * deadline is real work and keeps the process alive until it settles or is cleared.
 */
export function deadlineSignal(ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const deadline: Deadline = {
    due: performance.now() + ms,
    expire: () => controller.abort(new TransportError('timeout', `no answer within ${ms} ms`)),
  };
  clock.add(deadline);
  return { signal: controller.signal, clear: () => clock.end(deadline) };
}

/**
 * The state of one call: its deadline (an entry of the shared clock), its signal, and the wait it
 * may have to abandon. Methods rather than closures, so the common path (one attempt, answered in
 * time) allocates little beyond the call itself.
 */
class DeadlineCall implements Deadline {
  readonly due: number;
  readonly controller = takeController();
  timedOut = false;
  private abandon: ((error: Error) => void) | undefined;
  private onInterrupt: (() => void) | undefined;

  constructor(
    private readonly options: CallOptions,
    started: number,
  ) {
    this.due = started + options.timeoutMs;
    const interrupt = options.interrupt;
    if (interrupt === undefined) return;
    if (interrupt.aborted) this.abort(interrupt.reason);
    else {
      this.onInterrupt = () => this.abort(interrupt.reason);
      interrupt.addEventListener('abort', this.onInterrupt, { once: true });
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get interrupted(): boolean {
    return this.options.interrupt?.aborted === true;
  }

  /** The clock's call at the deadline. */
  expire(): void {
    this.timedOut = true;
    this.abort(new TransportError('timeout', `no answer within ${this.options.timeoutMs} ms`));
  }

  /**
   * Aborts the signal; the wait is abandoned once the promise jobs queued by the abort have run
   * (setImmediate), so an answer the transport settles inside its abort listener still wins,
   * however many promise hops it takes: the stdio binding hands up, at the deadline, a mismatched
   * answer it held back while waiting for the live one. A transport that ignores the abort is
   * abandoned right after.
   */
  private abort(reason: unknown): void {
    this.controller.abort(reason);
    setImmediate(() => this.abandon?.(abortError(this.signal)));
  }

  /** Settles with `promise`, or rejects as soon as the call aborts (a transport that hangs cannot hold us). */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(abortError(this.signal));
    }
    return new Promise<T>((resolve, reject) => {
      this.abandon = reject;
      promise.then(resolve, reject);
    });
  }

  /** Waits before a retry; the deadline or the interruption ends the wait. */
  pause(ms: number): Promise<void> {
    return this.race(new Promise<void>((resolve) => setTimeout(resolve, ms)));
  }

  /** Whether a retry after `ms` would still start inside the deadline. */
  roomFor(ms: number): boolean {
    return performance.now() + ms < this.due;
  }

  end(): void {
    clock.end(this);
    if (this.onInterrupt !== undefined)
      this.options.interrupt?.removeEventListener('abort', this.onInterrupt);
    giveBack(this.controller);
  }
}

export async function callWithDeadline(
  transport: BackendTransport,
  request: JsonRpcRequest,
  options: CallOptions,
): Promise<CallResult> {
  // One controller aborted by the deadline or by the interruption: cheaper per call than
  // AbortSignal.any, which keeps weak references on a long-lived interruption signal. Both abort
  // paths are ours, so they also end the pending wait directly, with no listener on the signal.
  const call = new DeadlineCall(options, performance.now());
  clock.add(call);
  const { maxAttempts, retryDelayMs } = options;
  const timeout = () => `timeout: no answer within ${options.timeoutMs} ms`;
  let attempts = 0;
  try {
    for (;;) {
      attempts++;
      try {
        const response = await call.race(transport.request(request, call.signal));
        // An answer handed over inside an interruption's abort is not taken: the call is over.
        if (call.interrupted) return { kind: 'interrupted', attempts };
        if (retryableAnswer(response) && attempts < maxAttempts && call.roomFor(retryDelayMs)) {
          await call.pause(retryDelayMs);
          continue;
        }
        return { kind: 'response', response, attempts };
      } catch (error) {
        if (call.interrupted) return { kind: 'interrupted', attempts };
        if (call.timedOut) return { kind: 'failed', reason: timeout(), attempts };
        const code = error instanceof TransportError ? error.code : 'transport';
        const message = error instanceof Error ? error.message : String(error);
        if (code === 'transport' && attempts < maxAttempts && call.roomFor(retryDelayMs)) {
          try {
            await call.pause(retryDelayMs);
          } catch {
            if (call.interrupted) return { kind: 'interrupted', attempts };
            return { kind: 'failed', reason: timeout(), attempts };
          }
          continue;
        }
        return { kind: 'failed', reason: `${code}: ${message}`, attempts };
      }
    }
  } finally {
    call.end();
  }
}
