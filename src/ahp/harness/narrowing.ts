/**
 * Per-request narrowing of an advertisement (the protocol's "advertise only what is enforceable
 * now"): a whole-list `replace` cannot be accepted over content the subscription cannot see, so
 * it is not offered for such a target.
 */

import { holdsWithheldContent, readPath, targetLocation } from '../protocol/edit-targets.js';
import type { InterceptCapabilities } from './compose.js';

type JsonObject = Record<string, unknown>;

/**
 * Removes whole-list `replace` from the advertisement for list targets whose text this
 * subscription cannot see: such a replace could never be accepted.
 */
export function narrowCapabilities(
  caps: InterceptCapabilities,
  effective: JsonObject,
  view: JsonObject,
): InterceptCapabilities {
  if (!caps.modify) return caps;
  let modify: Record<string, { replace: boolean; merge: boolean }> | undefined;
  for (const [target, ops] of Object.entries(caps.modify)) {
    const location = targetLocation(String(effective.type), target);
    if (!ops.replace || location?.shape !== 'list') continue;
    const full = readPath(effective, location.path);
    if (!holdsWithheldContent(full) && JSON.stringify(full) === JSON.stringify(readPath(view, location.path)))
      continue;
    modify ??= { ...caps.modify };
    if (ops.merge) modify[target] = { replace: false, merge: true };
    else delete modify[target];
  }
  if (!modify) return caps;
  if (Object.keys(modify).length > 0) return { ...caps, modify };
  const { modify: _dropped, ...rest } = caps;
  return { ...rest, effects: caps.effects.filter((e) => e !== 'modify') };
}
