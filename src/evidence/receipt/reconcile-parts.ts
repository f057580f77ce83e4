/**
 * The reconcile pass's witnesses: its own `file.changed` reports, its summary's corroborated paths,
 * and those of the `tally.reconcile.corroborated` parts the summary counts. Reports and parts are
 * written before their summary, and a close that dies before it leaves records no summary counts;
 * the next close runs the pass again over a tree that may have changed since (a file the dead
 * attempt reported created may be gone). So a report or part that names an attempt is held until a
 * summary of the same attempt claims it, and one no summary claims is never a witness. One that
 * names no attempt (an earlier version's) is read where it stands, as it always was.
 *
 * What is held is what those records would have put in the ledger at once, only later: a pass
 * reports at most its limit of paths, and its parts hold the paths it corroborated.
 */
import { isJsonObject } from '../../core/json.js';
import type { WorkspaceFrame } from '../normalize.js';
import type { EventRecord } from '../record/record.js';
import { fileChangedWitnesses, reconcileSummaryWitnesses } from './sources.js';
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

/** Reports and parts held until the summary of their attempt, in record order. */
export class ReconcileParts {
  private held = new Map<string, WriteWitness[]>();
  private summarised = false;

  /** A part's witnesses to take now: none for one that names an attempt (held for its summary). */
  part(record: EventRecord, frame: WorkspaceFrame): WriteWitness[] {
    return this.hold(record, () => reconcileSummaryWitnesses(record, frame));
  }

  /** A `file.changed` of the pass: held as a part is. */
  report(record: EventRecord, frame: WorkspaceFrame): WriteWitness[] {
    return this.hold(record, () => fileChangedWitnesses(record, frame));
  }

  /**
   * A summary's witnesses: those of the reports and parts of its attempt, then its own corroborated
   * paths when the receipt reads them (`corroborated`: v2). Everything else held is dropped: the
   * pass writes one summary, and records before it that it does not claim are an attempt that
   * never finished.
   */
  summary(record: EventRecord, frame: WorkspaceFrame, corroborated: boolean): WriteWitness[] {
    const attempt = reconcileAttempt(record);
    const held = attempt === undefined ? [] : (this.held.get(attempt) ?? []);
    this.held = new Map();
    this.summarised = true;
    return corroborated ? held.concat(reconcileSummaryWitnesses(record, frame)) : held;
  }

  private hold(record: EventRecord, witnesses: () => WriteWitness[]): WriteWitness[] {
    const attempt = reconcileAttempt(record);
    if (attempt === undefined) return witnesses();
    // The pass writes its reports and parts before its one summary: one after it is none of its own.
    if (this.summarised) return [];
    const list = this.held.get(attempt);
    if (list === undefined) this.held.set(attempt, witnesses());
    // One at a time: a part may hold hundreds of thousands of short paths, too many to spread.
    else for (const w of witnesses()) list.push(w);
    return [];
  }
}
