/**
 * A net change of the working tree as an AHP `file.changed` event: a rename is the `create` of the
 * new path and the `remove` of the old one, with `from` in the `dev.tally.changes` extension; a path
 * that is not UTF-8 keeps its bytes there (`path_b64`, `non_utf8`); a path whose content could not
 * be read has no `after` and says why (`unreadable`: the error's code); one of git's own files kept
 * outside the tree's `.git` says where it lies (`location`).
 */
import { eventId } from '../../boundary/prepare.js';
import type { CanonicalEvent } from '../../core/event.js';
import type { WorkspaceChange } from './changes.js';
import { pathOut } from './paths.js';

const AHP_OPERATION = {
  created: 'create',
  modified: 'update',
  deleted: 'remove',
  renamed: 'create',
} as const;

export function fileChangedEvent(
  change: WorkspaceChange,
  at: { session: string; time: string; source: string; agentCaused?: boolean },
): CanonicalEvent {
  const agentCaused = at.agentCaused ?? false;
  const to = pathOut(change.raw);
  const facts: Record<string, unknown> = {};
  if (to.path_b64 !== undefined) Object.assign(facts, { path_b64: to.path_b64, non_utf8: true });
  if (change.before !== undefined) facts.before = change.before;
  if (change.after !== undefined) facts.after = change.after;
  if (change.unreadable !== undefined) facts.unreadable = change.unreadable;
  if (change.location !== undefined) facts.location = change.location;
  const changes: Record<string, unknown>[] = [
    { path: to.path, operation: AHP_OPERATION[change.operation], agentCaused },
  ];
  const extension: Record<string, unknown> = { [to.path]: facts };
  if (change.fromRaw !== undefined) {
    const from = pathOut(change.fromRaw);
    facts.from = from.path;
    if (from.path_b64 !== undefined) Object.assign(facts, { from_b64: from.path_b64, non_utf8: true });
    changes.push({ path: from.path, operation: 'remove', agentCaused });
  }
  return {
    id: eventId(),
    type: 'file.changed',
    time: at.time,
    source: at.source,
    session: { id: at.session },
    changes,
    extensions: { 'dev.tally.changes': extension },
  };
}
