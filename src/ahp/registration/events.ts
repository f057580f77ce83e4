/**
 * Event selectors of a subscription: exact catalogue names, whole-family wildcards (`tool.*`) and
 * `*`. No other pattern exists. This file validates a subscription's `events` array and expands
 * selectors to the event types they deliver for a mode.
 *
 * A wildcard in an intercept subscription selects only the interceptable events it covers
 * (`model.*` intercepts model.request.before, model.response.after and model.switch.before, never
 * model.error); a wildcard that covers no interceptable event at all is an error.
 */
import { EVENT_CATALOGUE } from '../protocol/catalogue.js';
import { type IssueCollector, jsonType, pointerTo } from './check.js';
import type { EventSelector } from './types.js';

export type SubscriptionMode = 'intercept' | 'observe';

const WILDCARD = /^(?:\*|[a-z][a-z0-9]*\.\*)$/;

const FAMILIES: ReadonlyMap<string, readonly { type: string; interceptable: boolean }[]> = (() => {
  const map = new Map<string, { type: string; interceptable: boolean }[]>();
  for (const e of EVENT_CATALOGUE) {
    const list = map.get(e.family) ?? [];
    list.push({ type: e.type, interceptable: e.interceptable });
    map.set(e.family, list);
  }
  return map;
})();

const BY_TYPE: ReadonlyMap<string, boolean> = new Map(EVENT_CATALOGUE.map((e) => [e.type, e.interceptable]));

/**
 * The event types one selector delivers for a mode, in catalogue order: for intercept only the
 * interceptable ones. Unknown names and families select nothing.
 */
export function expandSelector(selector: EventSelector, mode: SubscriptionMode): string[] {
  const eligible = (e: { interceptable: boolean }) => mode === 'observe' || e.interceptable;
  if (selector === '*') return EVENT_CATALOGUE.filter(eligible).map((e) => e.type);
  if (WILDCARD.test(selector))
    return (FAMILIES.get(selector.slice(0, -2)) ?? []).filter(eligible).map((e) => e.type);
  const interceptable = BY_TYPE.get(selector);
  if (interceptable === undefined || (mode === 'intercept' && !interceptable)) return [];
  return [selector];
}

/**
 * Validates a subscription's `events` at `pointer`. `mode` is undefined when the subscription's
 * own mode is invalid; then the interceptable rule is not applied.
 */
export function checkEvents(
  c: IssueCollector,
  raw: unknown,
  pointer: string,
  mode: SubscriptionMode | undefined,
): EventSelector[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) {
    c.error(
      pointer,
      'subscription.events',
      raw === undefined
        ? "'events' is required: a non-empty array of event selectors"
        : `'events' must be a non-empty array of event selectors, not ${Array.isArray(raw) ? 'an empty array' : jsonType(raw)}`,
    );
    return undefined;
  }
  const mark = c.mark();
  const seen = new Map<string, number>();
  raw.forEach((selector: unknown, i) => {
    const at = pointerTo(pointer, i);
    if (typeof selector !== 'string') {
      c.error(
        at,
        'subscription.events.pattern',
        `event selector must be a string, not ${jsonType(selector)}`,
      );
      return;
    }
    const first = seen.get(selector);
    if (first !== undefined) {
      c.error(
        at,
        'subscription.events.duplicate',
        `'${selector}' is already selected at ${pointerTo(pointer, first)}`,
      );
      return;
    }
    seen.set(selector, i);
    checkSelector(c, selector, at, mode);
  });
  if (c.errorsSince(mark) > 0) return undefined;
  const selectors = raw as string[];
  warnRedundant(c, selectors, pointer);
  return [...selectors];
}

function checkSelector(
  c: IssueCollector,
  selector: string,
  at: string,
  mode: SubscriptionMode | undefined,
): void {
  if (WILDCARD.test(selector)) {
    const family = selector === '*' ? undefined : selector.slice(0, -2);
    const members = family === undefined ? EVENT_CATALOGUE : FAMILIES.get(family);
    if (members === undefined) {
      c.error(at, 'subscription.events.unknown', `'${selector}' names no event family of the catalogue`);
    } else if (mode === 'intercept' && !members.some((e) => e.interceptable)) {
      c.error(
        at,
        'subscription.events.not-interceptable',
        `'${selector}' covers no interceptable event; select it with an observe subscription`,
      );
    } else if (mode === 'intercept' && family !== undefined && !members.every((e) => e.interceptable)) {
      const skipped = members.filter((e) => !e.interceptable).map((e) => e.type);
      c.warn(
        at,
        'subscription.events.partly-interceptable',
        `'${selector}' intercepts only the interceptable events of its family; not delivered here: ${skipped.join(', ')}`,
      );
    }
    return;
  }
  if (selector.includes('*') || selector.includes('?') || selector.includes('[')) {
    c.error(
      at,
      'subscription.events.pattern',
      `'${selector}' is not a selector: use an exact event name, a whole-family wildcard such as 'tool.*', or '*'`,
    );
    return;
  }
  const interceptable = BY_TYPE.get(selector);
  if (interceptable === undefined) {
    c.error(at, 'subscription.events.unknown', `'${selector}' is not an event of the catalogue`);
  } else if (mode === 'intercept' && !interceptable) {
    c.error(
      at,
      'subscription.events.not-interceptable',
      `'${selector}' is observe-only and cannot be selected by an intercept subscription`,
    );
  }
}

/** Warns about exact names already covered by a wildcard of the same array (harmless, but noise). */
function warnRedundant(c: IssueCollector, selectors: readonly string[], pointer: string): void {
  const all = selectors.includes('*');
  const families = new Set(selectors.filter((s) => s.endsWith('.*')).map((s) => s.slice(0, -2)));
  selectors.forEach((s, i) => {
    if (s === '*') return;
    const family = s.endsWith('.*') ? undefined : s.slice(0, s.indexOf('.'));
    if (all || (family !== undefined && families.has(family))) {
      c.warn(
        pointerTo(pointer, i),
        'subscription.events.redundant',
        `'${s}' is already covered by a wildcard`,
      );
    }
  });
}
