/**
 * `hook.failure` observations: after a boundary settles, each interceptor call that failed
 * operationally or whose response was rejected can surface as one observe-only `hook.failure`
 * event (backend id, reason, policy, parent event). The reason is a failure class, never the
 * local diagnostic text, so no endpoint, credential or backend content travels with it.
 */
import type { CanonicalEvent } from '../../core/event.js';

/** The part of a subscription report this needs (see SubscriptionReport in ./dispatcher.ts). */
export interface FailedCall {
  backend: string;
  subscription: string;
  status: string;
  reason?: string;
  failurePolicy?: 'fail-open' | 'fail-closed';
}

/** A short, secret-free class of why a call failed: `timeout`, `transport`, `invalid response`, … */
export function failureClass(call: FailedCall): string {
  if (call.status === 'rejected') return 'invalid response';
  const reason = call.reason ?? '';
  if (reason.startsWith('upload:')) return 'upload failed';
  if (reason.startsWith('JSON-RPC error')) return reason.replace(/^(JSON-RPC error -?\d+).*$/s, '$1');
  const head = /^([a-z][a-z-]*):/.exec(reason)?.[1];
  return head ?? 'operational failure';
}

/**
 * One `hook.failure` event per failed or rejected intercept call of `parent`, in call order. Ids
 * derive from the parent id and the call's position, so a re-emission keeps the same identity.
 */
export function hookFailureEvents(
  parent: CanonicalEvent,
  calls: readonly FailedCall[],
  now: () => Date = () => new Date(),
): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  calls.forEach((call, i) => {
    if ((call.status !== 'failed' && call.status !== 'rejected') || call.failurePolicy === undefined) return;
    out.push({
      id: `${parent.id}.hook-failure.${i}`,
      source: parent.source,
      type: 'hook.failure',
      time: now().toISOString(),
      parentEventId: parent.id,
      ...(parent.session ? { session: parent.session } : {}),
      failure: { backendId: call.backend, reason: failureClass(call), policy: call.failurePolicy },
    });
  });
  return out;
}
