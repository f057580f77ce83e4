/**
 * The records only a close writes: its reconcile pass's and its transcript pass's, each with its
 * own source and summary. No channel may claim them (the boundary refuses such an event): a
 * summary is what tells the close a pass already ran and tells the verifier what the pass found,
 * so one a channel could write would skip the pass and stand in for it.
 */
import type { EventRecord } from './record.js';

/** The record source of the reconcile pass, in either mode (git, or a tree snapshot outside git). */
export const RECONCILE_SOURCE = 'git-reconcile';
export const RECONCILE_SUMMARY_TYPE = 'tally.reconcile.summary';
/**
 * `rename_sources` of a reconcile summary: the receipt keeps a rename's source the pass reported
 * (deleted too) as a row of its own. Summaries sealed before it merged a reported deletion into a
 * channel's rename; their receipts are recomposed by that rule, as they were signed.
 */
export const RENAME_SOURCES_KEPT = 'kept';
/**
 * The corroborated paths past what the summary's share of its record holds (core/json-budget), in
 * records of their own written before the summary.
 */
export const RECONCILE_CORROBORATED_TYPE = 'tally.reconcile.corroborated';
/** The record source of what the agent's own transcript alone shows. */
export const TRANSCRIPT_SOURCE = 'transcript';
export const TRANSCRIPT_SUMMARY_TYPE = 'tally.transcript.summary';

/** Each type only the close writes, and the only source that writes it. */
const CLOSE_TYPES: ReadonlyMap<string, string> = new Map([
  [RECONCILE_SUMMARY_TYPE, RECONCILE_SOURCE],
  [RECONCILE_CORROBORATED_TYPE, RECONCILE_SOURCE],
  [TRANSCRIPT_SUMMARY_TYPE, TRANSCRIPT_SOURCE],
]);

/** The sources only the close writes. */
export const CLOSE_SOURCES: ReadonlySet<string> = new Set(CLOSE_TYPES.values());

/** Whether `type` is one only the close writes. */
export function isCloseOnlyType(type: unknown): boolean {
  return typeof type === 'string' && CLOSE_TYPES.has(type);
}

/**
 * A `file.changed` the reconcile pass wrote: a net change no channel reported. The type is any
 * channel's; the source is the close's alone (the boundary refuses a channel that names it).
 */
export function isPassReport(record: EventRecord): boolean {
  return record.event.type === 'file.changed' && record.source === RECONCILE_SOURCE;
}

/** A record of `type` the close's own pass wrote (not one of that type under another source). */
export function isCloseRecord(record: EventRecord, type: string): boolean {
  return record.event.type === type && CLOSE_TYPES.get(type) === record.source;
}
