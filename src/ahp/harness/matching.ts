/**
 * Which subscriptions of a registration receive an event (AHP-REG-002): the event type must match
 * one of the subscription's selectors (an exact name, a whole-family wildcard `family.*`, or `*`)
 * and the subscription's mode must match the delivery method. Wildcards in intercept mode expand
 * only to interceptable boundaries; an event type the catalogue does not know is never intercepted.
 */
import { catalogueEntry } from '../protocol/catalogue.js';
import type { Backend, EventSelector, Registration, Subscription } from '../registration/types.js';

export type DeliveryMode = 'intercept' | 'observe';

/** One subscription selected for an event, with its backend. */
export interface MatchedSubscription {
  backend: Backend;
  subscription: Subscription;
}

/** True when `selector` names `eventType` exactly, by its family wildcard, or by `*`. */
export function selectorMatches(selector: EventSelector, eventType: string): boolean {
  if (selector === '*') return true;
  if (selector.endsWith('.*')) {
    const family = selector.slice(0, -2);
    const dot = eventType.indexOf('.');
    return dot > 0 && eventType.slice(0, dot) === family;
  }
  return selector === eventType;
}

/** True when `subscription` receives `eventType` through `mode`. */
export function subscriptionMatches(
  subscription: Subscription,
  eventType: string,
  mode: DeliveryMode,
): boolean {
  if (subscription.mode !== mode) return false;
  if (mode === 'intercept' && catalogueEntry(eventType)?.interceptable !== true) return false;
  return subscription.events.some((selector) => selectorMatches(selector, eventType));
}

/**
 * The subscriptions that receive `eventType` through `mode`, in registration order: backends in
 * `hooks` order, and within a backend its subscriptions in document order.
 */
export function matchingSubscriptions(
  registration: Registration,
  eventType: string,
  mode: DeliveryMode,
): MatchedSubscription[] {
  const out: MatchedSubscription[] = [];
  for (const backend of registration.hooks) {
    for (const subscription of backend.subscriptions) {
      if (subscriptionMatches(subscription, eventType, mode)) out.push({ backend, subscription });
    }
  }
  return out;
}

/** A stable local label for a subscription: its harness-local id, else `#<index>`. */
export function subscriptionLabel(subscription: Subscription): string {
  return subscription.id ?? `#${subscription.index}`;
}
