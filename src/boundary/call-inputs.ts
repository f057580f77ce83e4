/**
 * What each open call said it would run: the tool and input of its `tool.before`, by the event's
 * source and call id, so a `tool.after` reporting another input (or another tool) for the same call
 * is flagged `input_changed` when it is recorded. What the boundary judged live is the before; the
 * verifier judges every input a call reported, flagged or not.
 */
import { canonicalize } from '../core/canonical.js';
import type { CanonicalEvent } from '../core/event.js';

/** Open calls remembered at most; the oldest is forgotten first (its after is then not compared). */
export const OPEN_CALLS_REMEMBERED = 10_000;

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The call's key and what it reported (tool name and input, canonical), or undefined without a call id. */
function reportOf(event: CanonicalEvent): { key: string; report: string } | undefined {
  const id = asObject(event.call)?.id;
  if (typeof id !== 'string') return undefined;
  const tool = asObject(event.tool);
  const report = canonicalize([tool?.name ?? null, tool?.input ?? null]);
  return { key: `${String(event.source)}\u0000${id}`, report };
}

export class CallInputs {
  private readonly open = new Map<string, string>();

  /** Remembers a `tool.before`. */
  before(event: CanonicalEvent): void {
    const found = reportOf(event);
    if (found === undefined) return;
    this.open.delete(found.key);
    this.open.set(found.key, found.report);
    if (this.open.size > OPEN_CALLS_REMEMBERED) {
      const oldest = this.open.keys().next().value;
      if (oldest !== undefined) this.open.delete(oldest);
    }
  }

  /** True when a `tool.after` reports a tool or input its `tool.before` did not; forgets the call. */
  changed(event: CanonicalEvent): boolean {
    const found = reportOf(event);
    if (found === undefined) return false;
    const before = this.open.get(found.key);
    this.open.delete(found.key);
    const tool = asObject(event.tool);
    // An after that omits the input says nothing about it.
    if (before === undefined || tool?.input === undefined) return false;
    return before !== found.report;
  }
}
