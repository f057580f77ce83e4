/**
 * What Tally, acting as the AHP harness, advertises: the static capability manifest returned by
 * `hooks/capabilities` (and copied into `session.start`), and the per-request `capabilities` object
 * of each `hooks/intercept`. Tally's composer enforces every core effect at every boundary the
 * catalogue allows, so advertisements follow the catalogue's per-event bounds exactly; the
 * dispatcher narrows them further per request (withheld content, remaining continuations).
 */

import type { CanonicalEvent } from '../../core/event.js';
import { SUPPORTED_PROTOCOL_VERSION } from '../registration/types.js';
import { CORE_EFFECT_TYPES, catalogueEntry, EVENT_CATALOGUE, type FlowOperation } from './catalogue.js';

/** Continuations one turn may request before Tally refuses further ones. */
export const MAX_CONTINUATIONS = 3;

/** The `capabilities` object of one intercept request. */
export interface RequestCapabilities {
  effects: string[];
  modify?: Record<string, { replace: boolean; merge: boolean }>;
  flow?: {
    operations: FlowOperation[];
    remainingContinuations?: number;
    continuationCount?: number;
    maxContinuations?: number;
  };
  inject?: { context: { append: true; deliverAt: ('now' | 'next_turn')[] } };
}

export interface RequestCapabilityOptions {
  /** Continuations already used in this turn (default 0); the remaining allowance shrinks with it. */
  continuationCount?: number;
  /** The turn's continuation allowance (default MAX_CONTINUATIONS). */
  maxContinuations?: number;
}

/**
 * The capabilities Tally advertises for an intercept request at `eventType`, or undefined when the
 * event cannot be intercepted (observe-only or unknown). Option blocks appear exactly when their
 * effect is listed; continuation counters appear whenever continue is offered.
 */
export function requestCapabilities(
  eventType: string,
  options: RequestCapabilityOptions = {},
): RequestCapabilities | undefined {
  const entry = catalogueEntry(eventType);
  if (!entry?.interceptable) return undefined;
  const caps: RequestCapabilities = {
    effects: CORE_EFFECT_TYPES.filter((effect) => entry.effects.includes(effect)),
  };
  if (caps.effects.includes('modify')) {
    caps.modify = Object.fromEntries(
      entry.modifyTargets.map((target) => [target, { replace: true, merge: true }]),
    );
  }
  if (caps.effects.includes('flow')) {
    caps.flow = { operations: [...entry.flowOperations] };
    if (entry.flowOperations.includes('continue')) {
      const max = options.maxContinuations ?? MAX_CONTINUATIONS;
      const used = options.continuationCount ?? 0;
      Object.assign(caps.flow, {
        remainingContinuations: Math.max(0, max - used),
        continuationCount: used,
        maxContinuations: max,
      });
    }
  }
  if (caps.effects.includes('inject'))
    caps.inject = { context: { append: true, deliverAt: ['now', 'next_turn'] } };
  return caps;
}

/**
 * `requestCapabilities` for one event: its type, and the continuations its turn has already used
 * (`event.continuationCount`, when the event carries one), so the advertised counters are the
 * event's own. The form a Dispatcher's `capabilitiesFor` wants:
 * `capabilitiesFor: (_type, event) => eventCapabilities(event)`.
 */
export function eventCapabilities(
  event: CanonicalEvent,
  options: Omit<RequestCapabilityOptions, 'continuationCount'> = {},
): RequestCapabilities | undefined {
  const used = event.continuationCount;
  return requestCapabilities(event.type, {
    ...options,
    ...(typeof used === 'number' && Number.isSafeInteger(used) && used >= 0
      ? { continuationCount: used }
      : {}),
  });
}

export interface ManifestEvent {
  event: string;
  modes: ('observe' | 'intercept')[];
  capabilities?: RequestCapabilities;
}

/**
 * The longest deadline a timer here can hold (2^31 − 1 ms, about 24.8 days): a longer `timeoutMs`
 * is valid in a registration but is clamped to this, and admission says so.
 */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** A registration's deadline as the harness applies it. */
export function effectiveTimeout(timeoutMs: number): number {
  return Math.min(timeoutMs, MAX_TIMEOUT_MS);
}

export interface CapabilityManifest {
  events: ManifestEvent[];
  gaps: { path: string; reason: string }[];
  transports: ('http' | 'stdio' | 'in_process')[];
  authentication: ('bearer' | 'oauth')[];
  toolPaths: string[];
  contentCategories: string[];
  limits: {
    maxUploadBytes?: number;
    maxContinuations?: number;
    minTimeoutMs?: number;
    maxTimeoutMs?: number;
  };
  managedPolicy: { scopes: ('user' | 'project' | 'managed')[]; disableable: boolean };
  correlationIdentityFields: string[];
}

/** The static manifest. Absent limits are unknown and each is explained in `gaps`, never unlimited. */
export function capabilityManifest(): CapabilityManifest {
  return {
    events: EVENT_CATALOGUE.map((entry) => {
      if (!entry.interceptable) return { event: entry.type, modes: ['observe'] };
      return {
        event: entry.type,
        modes: ['observe', 'intercept'],
        capabilities: requestCapabilities(entry.type),
      };
    }),
    gaps: [
      {
        path: 'toolPaths',
        reason:
          'Tally dispatches events its host adapter supplies; which tool paths are covered depends on that adapter',
      },
      {
        path: 'limits.maxUploadBytes',
        reason: 'uploads are bounded per subscription by upload.maxBytes, not by one harness-wide limit',
      },
    ],
    transports: ['http', 'stdio'],
    authentication: ['bearer', 'oauth'],
    toolPaths: [],
    contentCategories: ['text', 'reasoning', 'images', 'audio', 'video', 'files'],
    limits: { maxContinuations: MAX_CONTINUATIONS, minTimeoutMs: 1, maxTimeoutMs: MAX_TIMEOUT_MS },
    managedPolicy: { scopes: ['user', 'project'], disableable: true },
    correlationIdentityFields: ['id', 'session.id', 'turn.id', 'call.id', 'items.id'],
  };
}

/** The `result` of a `hooks/capabilities` response. */
export function capabilitiesResult(): { protocolVersion: string; manifest: CapabilityManifest } {
  return { protocolVersion: SUPPORTED_PROTOCOL_VERSION, manifest: capabilityManifest() };
}
