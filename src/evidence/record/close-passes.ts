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
/** The record source of what the agent's own transcript alone shows. */
export const TRANSCRIPT_SOURCE = 'transcript';
export const TRANSCRIPT_SUMMARY_TYPE = 'tally.transcript.summary';

/** Each summary type and the only source that writes it. */
const SUMMARIES: ReadonlyMap<string, string> = new Map([
  [RECONCILE_SUMMARY_TYPE, RECONCILE_SOURCE],
  [TRANSCRIPT_SUMMARY_TYPE, TRANSCRIPT_SOURCE],
]);

/** The sources only the close writes. */
export const CLOSE_SOURCES: ReadonlySet<string> = new Set(SUMMARIES.values());

/** Whether `type` is a summary only the close writes. */
export function isCloseSummaryType(type: unknown): boolean {
  return typeof type === 'string' && SUMMARIES.has(type);
}

/** A summary of `type` the close's own pass wrote (not one of that type under another source). */
export function isCloseSummary(record: EventRecord, type: string): boolean {
  return record.event.type === type && SUMMARIES.get(type) === record.source;
}
