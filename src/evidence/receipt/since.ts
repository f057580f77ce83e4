/**
 * `session.since`: what the signed `session.start` says changed in the tree after the previous
 * session of the root closed and before this one started (docs/reconcile.md, "Between sessions").
 * Read from the start record alone; never joined to `files_written`: nothing here is this
 * session's doing.
 */
import type { CanonicalEvent } from '../../core/event.js';
import { isJsonObject } from '../../core/json.js';

export interface SinceChange {
  path: string;
  operation: string;
  from?: string;
}

export interface ReceiptSince {
  state: string;
  session?: string;
  package?: string;
  closed_at?: string;
  commit?: { end?: string; start?: string };
  changed?: SinceChange[];
  count?: number;
  snapshot?: string;
  reason?: string;
}

const TEXT_FIELDS = ['session', 'package', 'closed_at', 'snapshot', 'reason'] as const;

/** The start record's `since`, in the receipt's shape; undefined when it recorded none. */
export function sinceOf(start: CanonicalEvent | undefined): ReceiptSince | undefined {
  const extensions = start?.extensions;
  const workspace = isJsonObject(extensions) ? extensions['dev.tally.workspace'] : undefined;
  return receiptSince(isJsonObject(workspace) ? workspace.since : undefined);
}

/** A `since` as recorded (or as a receipt holds it), in the receipt's shape; undefined when it is none. */
export function receiptSince(since: unknown): ReceiptSince | undefined {
  if (!isJsonObject(since) || typeof since.state !== 'string') return undefined;
  const out: ReceiptSince = { state: since.state };
  for (const field of TEXT_FIELDS) {
    const value = since[field];
    if (typeof value === 'string') out[field] = value;
  }
  if (isJsonObject(since.commit)) {
    const { end, start: now } = since.commit;
    out.commit = {
      ...(typeof end === 'string' ? { end } : {}),
      ...(typeof now === 'string' ? { start: now } : {}),
    };
  }
  if (Array.isArray(since.changed)) {
    out.changed = since.changed.flatMap(changeOf);
    out.count = Number.isSafeInteger(since.count) ? (since.count as number) : out.changed.length;
  }
  return out;
}

function changeOf(value: unknown): SinceChange[] {
  if (!isJsonObject(value) || typeof value.path !== 'string' || typeof value.operation !== 'string')
    return [];
  const change: SinceChange = { path: value.path, operation: value.operation };
  if (typeof value.from === 'string') change.from = value.from;
  return [change];
}

/** One line a person reads: what `since` says, in its own wording. */
export function sinceSentence(since: ReceiptSince): string {
  const prev = since.session ?? 'the previous session';
  switch (since.state) {
    case 'unchanged':
      return `the tree is as session ${prev} left it when it closed`;
    case 'changed': {
      const moved = since.commit
        ? `HEAD moved ${since.commit.end ?? '(none)'} → ${since.commit.start ?? '(none)'}; `
        : '';
      return `${moved}${since.count ?? 0} path(s) changed after session ${prev} closed, before this one started`;
    }
    case 'incomplete':
      return `no path seen changed after session ${prev} closed, but ${since.reason ?? 'some could not be compared'}`;
    case 'none':
      return 'no earlier session of this project is known here';
    case 'no-end-state':
      return `session ${prev} recorded no end state: what changed after it closed is not known`;
    case 'missing':
      return `the package of session ${prev} is missing: what changed after it closed is not known`;
    case 'unverified':
      return `the package of session ${prev} does not verify: what changed after it closed is not known`;
    default:
      return `what changed after session ${prev} closed could not be compared`;
  }
}
