/**
 * The reconcile pass's witnesses of the paths it corroborated: its summary's, and those of the
 * `tally.reconcile.corroborated` parts the summary counts. A part is written before its summary,
 * and a close that dies between the two leaves parts no summary counts; the next close runs the
 * pass again over a tree that may have changed since. So a part that names an attempt is held until
 * a summary of the same attempt claims it, and one no summary claims is never a witness. A part
 * that names no attempt (an earlier version's) is read where it stands, as it always was.
 */
import { isJsonObject } from '../../core/json.js';
import type { WorkspaceFrame } from '../normalize.js';
import type { EventRecord } from '../record/record.js';
import { reconcileSummaryWitnesses } from './sources.js';
import type { WriteWitness } from './types.js';

/** What a reconcile record says of its pass (`extensions["dev.tally.reconcile"]`), or nothing. */
export function reconcileBody(record: EventRecord): Record<string, unknown> {
  const extensions = record.event.extensions;
  const body = isJsonObject(extensions) ? extensions['dev.tally.reconcile'] : undefined;
  return isJsonObject(body) ? body : {};
}

/** The `attempt` a reconcile record names, if it names one. */
export function reconcileAttempt(record: EventRecord): string | undefined {
  const attempt = reconcileBody(record).attempt;
  return typeof attempt === 'string' ? attempt : undefined;
}

/** Parts held until the summary of their attempt, in record order. */
export class ReconcileParts {
  private held = new Map<string, WriteWitness[]>();
  private summarised = false;

  /** A part's witnesses to take now: none for one that names an attempt (held for its summary). */
  part(record: EventRecord, frame: WorkspaceFrame): WriteWitness[] {
    const attempt = reconcileAttempt(record);
    if (attempt === undefined) return reconcileSummaryWitnesses(record, frame);
    // The pass writes its parts before its one summary: a part after a summary is none of its own.
    if (this.summarised) return [];
    const witnesses = reconcileSummaryWitnesses(record, frame);
    const list = this.held.get(attempt);
    if (list === undefined) this.held.set(attempt, witnesses);
    // One at a time: a part may hold hundreds of thousands of short paths, too many to spread.
    else for (const w of witnesses) list.push(w);
    return [];
  }

  /**
   * A summary's witnesses: those of the parts of its attempt, then its own. Every other part held
   * is dropped: the pass writes one summary, and parts before it that it does not claim are an
   * attempt that never finished.
   */
  summary(record: EventRecord, frame: WorkspaceFrame): WriteWitness[] {
    const attempt = reconcileAttempt(record);
    const parts = attempt === undefined ? [] : (this.held.get(attempt) ?? []);
    this.held = new Map();
    this.summarised = true;
    return parts.concat(reconcileSummaryWitnesses(record, frame));
  }
}
