/**
 * Call ids for harnesses that report none (Gemini CLI, Cursor). Each "before" half of a call gets
 * an id of its own, and an "after" half takes the id of the latest before of the same session and
 * call still waiting for one (last in, first out: a nested identical call finishes first). So two
 * identical calls in one session get two ids, and a call stopped before it ran (no after) leaves
 * its id to no later call. The waiting calls are kept by a digest of the call, never its input
 * (a write's whole content), and bounded.
 */
import { canonicalize } from '../core/canonical.js';
import { sha256Hex } from '../core/hash.js';

const MAX_KEYS = 10_000;
const MAX_PER_KEY = 64;

export class CallPairing {
  /** Before ids waiting for their after, by session and call digest. */
  private readonly waiting = new Map<string, string[]>();
  private issued = 0;

  constructor(private readonly prefix: string) {}

  private key(session: string, call: unknown): string {
    return `${session}\0${sha256Hex(canonicalize(call ?? null))}`;
  }

  /** A fresh id, unique to this process and call (`stamp`: what the harness says of the moment). */
  fresh(session: string, call: unknown, stamp = ''): string {
    return this.freshFor(this.key(session, call), stamp);
  }

  private freshFor(key: string, stamp: string): string {
    return `${this.prefix}-${sha256Hex(`${key}\0${stamp}\0${process.pid}\0${this.issued++}`).slice(0, 32)}`;
  }

  /** The id of a call's before half, kept for its after. */
  before(session: string, call: unknown, stamp = ''): string {
    const key = this.key(session, call);
    const id = this.freshFor(key, stamp);
    const queue = this.waiting.get(key);
    if (queue === undefined) {
      if (this.waiting.size >= MAX_KEYS) this.waiting.delete(this.waiting.keys().next().value as string);
      this.waiting.set(key, [id]);
    } else if (queue.push(id) > MAX_PER_KEY) queue.shift();
    return id;
  }

  /**
   * The id of a call's after half: its before's, or — for an after whose before this process
   * never saw (a recorder started between them) — one derived from the call.
   */
  after(session: string, call: unknown): string {
    const key = this.key(session, call);
    const queue = this.waiting.get(key);
    const id = queue?.pop();
    if (queue?.length === 0) this.waiting.delete(key);
    return id ?? `${this.prefix}-${sha256Hex(key).slice(0, 32)}`;
  }

  /** Forgets the waiting calls of a session that ended. */
  forget(session: string): void {
    for (const key of this.waiting.keys()) if (key.startsWith(`${session}\0`)) this.waiting.delete(key);
  }
}
