/**
 * The harness-side AHP dispatcher. For one canonical event it calls every matching intercept
 * subscription serially in registration order, accepts or rejects each response whole, composes
 * the accepted effects (./compose.ts), short-circuits on deny, stop or a fail-closed failure, and
 * after settlement sends `hooks/observe` to the explicit observers and to every intercept
 * subscription that was not called. A `Dispatcher` keeps backend transports open across events
 * (persistent stdio processes, HTTP agents) until `close()`.
 */

import type { CanonicalEvent } from '../../core/event.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { validateInterceptResponse, validateMessage } from '../messages/index.js';
import { effectiveTimeout } from '../protocol/capabilities.js';
import {
  type Backend,
  type Registration,
  SUPPORTED_PROTOCOL_VERSION,
  type Subscription,
} from '../registration/types.js';
import type { BackendTransport, JsonRpcNotification, JsonRpcRequest } from '../transports/transport.js';
import {
  type AttachmentBytes,
  type AttachmentUploader,
  needsPublishing,
  publishAttachments,
} from './attachments.js';
import { callWithDeadline, deadlineSignal } from './call.js';
import { checkContinuations, describeIssues, issuesAdded, prePublicationIssues } from './checks.js';
import {
  failClosed,
  type InterceptCapabilities,
  type Pipeline,
  type StageContext,
  settle,
  stageResponse,
  startPipeline,
} from './compose.js';
import { selectContent, selectContentNoting } from './content.js';
import { hookFailureEvents } from './hook-failure.js';
import { type MatchedSubscription, matchingSubscriptions, subscriptionLabel } from './matching.js';
import { narrowCapabilities } from './narrowing.js';
import {
  DispatchError,
  type DispatcherOptions,
  type DispatchInput,
  type DispatchOutcome,
  type SubscriptionReport,
} from './types.js';

export type {
  DispatcherOptions,
  DispatchInput,
  DispatchOutcome,
  SubscriptionReport,
  SubscriptionStatus,
  TransportFactory,
} from './types.js';
export { DispatchError, type DispatchErrorCode } from './types.js';

/** The generic reason of a fail-closed synthetic denial: no backend detail reaches the model. */
export const SYNTHETIC_DENY_REASON = 'policy backend unavailable';

function checkEvent(event: unknown): asserts event is CanonicalEvent {
  if (!isJsonObject(event))
    throw new DispatchError('bad-event', 'the event is not a JSON object', { pointer: '' });
  for (const key of ['id', 'type', 'time', 'source']) {
    if (typeof event[key] !== 'string' || event[key] === '') {
      throw new DispatchError('bad-event', `the event needs a non-empty string '${key}'`, {
        pointer: `/${key}`,
      });
    }
  }
}

type InterceptStep = {
  pipeline: Pipeline;
  report: SubscriptionReport;
  settles?: boolean;
  interrupted?: boolean;
};

/** A failed or rejected call, settled by its subscription's failure policy (default fail-closed). */
export function settleFailure(
  pipeline: Pipeline,
  report: SubscriptionReport,
  failurePolicy: Subscription['failurePolicy'],
  supplier: { backend: string; subscription: string },
  status: 'failed' | 'rejected',
  reason: string,
): InterceptStep {
  const policy = failurePolicy ?? 'fail-closed';
  report.status = status;
  report.reason = reason;
  report.failurePolicy = policy;
  if (policy === 'fail-open') return { pipeline, report };
  return { pipeline: failClosed(pipeline, supplier, SYNTHETIC_DENY_REASON), report, settles: true };
}

/** The outcome of a settled pipeline, with the reports of the subscriptions it reached. */
export function settledOutcome(
  pipeline: Pipeline,
  capabilities: InterceptCapabilities | undefined,
  reports: SubscriptionReport[],
): DispatchOutcome {
  // The settlement is a fresh object: completed in place rather than spread into a copy.
  const outcome = settle(pipeline, capabilities) as DispatchOutcome;
  outcome.permission = pipeline.permission;
  if (pipeline.denial) outcome.denial = pipeline.denial;
  outcome.event = pipeline.event;
  outcome.subscriptions = reports;
  return outcome;
}

export class Dispatcher {
  readonly registration: Registration;
  private readonly options: DispatcherOptions;
  private readonly transports = new Map<Backend, BackendTransport>();
  private readonly uploaders = new Map<Subscription, AttachmentUploader | undefined>();
  private readonly detached = new Set<Promise<unknown>>();
  /** Matching subscriptions by mode and event type: the registration does not change while open. */
  private readonly matches = {
    intercept: new Map<string, MatchedSubscription[]>(),
    observe: new Map<string, MatchedSubscription[]>(),
  };
  private closed = false;

  constructor(options: DispatcherOptions) {
    this.options = options;
    this.registration = options.registration;
  }

  private transportFor(backend: Backend): BackendTransport {
    if (this.closed) throw new DispatchError('closed', 'the dispatcher is closed');
    let transport = this.transports.get(backend);
    if (!transport) {
      transport = this.options.transportFactory(backend);
      this.transports.set(backend, transport);
    }
    return transport;
  }

  private matching(eventType: string, mode: 'intercept' | 'observe'): readonly MatchedSubscription[] {
    const cache = this.matches[mode];
    let found = cache.get(eventType);
    if (!found) {
      found = matchingSubscriptions(this.registration, eventType, mode);
      cache.set(eventType, found);
    }
    return found;
  }

  private uploaderFor(backend: Backend, subscription: Subscription): AttachmentUploader | undefined {
    if (!this.uploaders.has(subscription)) {
      const binding = subscription.upload;
      const pointer = `/hooks/${backend.index}/subscriptions/${subscription.index}/upload`;
      this.uploaders.set(subscription, binding && this.options.uploaderFor?.(binding, pointer));
    }
    return this.uploaders.get(subscription);
  }

  /** Runs one event through every matching subscription and returns the settled outcome. */
  async dispatch(input: DispatchInput): Promise<DispatchOutcome> {
    checkEvent(input.event);
    if (this.closed) throw new DispatchError('closed', 'the dispatcher is closed');
    const event = input.event;
    const interceptors = this.matching(event.type, 'intercept');
    const capabilities = input.capabilities ?? this.options.capabilitiesFor?.(event.type, event);
    if (capabilities === undefined && interceptors.length > 0) {
      throw new DispatchError('no-capabilities', `no capabilities to advertise for '${event.type}'`, {
        pointer: '/type',
      });
    }
    if (interceptors.length > 0) checkContinuations(event, capabilities);
    const observers = this.matching(event.type, 'observe');
    const reports: SubscriptionReport[] = [];
    let pipeline = startPipeline(event, input.state);
    let interrupted = false;
    let next = 0;

    // Incoming state (an earlier deny or stop outside this dispatch) does not stop the calls;
    // a deny, stop or fail-closed failure settled here does.
    while (next < interceptors.length) {
      if (input.signal?.aborted) {
        interrupted = true;
        break;
      }
      const match = interceptors[next++] as MatchedSubscription;
      const started = performance.now();
      const step = await this.intercept(match, pipeline, capabilities as InterceptCapabilities, input);
      step.report.latencyMs = Math.round(performance.now() - started);
      reports.push(step.report);
      if (step.interrupted) {
        interrupted = true;
        break;
      }
      pipeline = step.pipeline;
      if (step.settles) break;
    }

    const outcome = settledOutcome(pipeline, interceptors.length > 0 ? capabilities : undefined, reports);
    if (interrupted) {
      outcome.interrupted = true;
      outcome.executed = false;
      delete outcome.result;
    }

    // Observation after settlement: uncalled interceptors, then explicit observers.
    // Nothing is scheduled (no extra await) when there is no one to tell.
    const watchers = next < interceptors.length ? [...interceptors.slice(next), ...observers] : observers;
    const calls = this.options.hookFailures ? reports.filter((r) => r.method === 'hooks/intercept') : [];
    let deliveries =
      watchers.length > 0 ? this.observe(watchers, pipeline.event, reports, input.attachments) : undefined;
    const failures = calls.length > 0 ? hookFailureEvents(event, calls) : [];
    if (failures.length > 0) {
      const auditors = this.matching('hook.failure', 'observe');
      for (const failure of failures) {
        deliveries = (deliveries ?? Promise.resolve()).then(() =>
          this.observe(auditors, failure, reports, undefined, 'hook.failure'),
        );
      }
    }
    if (deliveries === undefined) return outcome;
    if (interrupted) this.detach(deliveries);
    else await deliveries;
    return outcome;
  }

  /**
   * Best-effort `hooks/observe` of an event to its observers only, never its interceptors: for an
   * event that already happened (the caller records it; nothing can be stopped any more).
   */
  async notify(event: CanonicalEvent, attachments?: AttachmentBytes): Promise<SubscriptionReport[]> {
    checkEvent(event);
    if (this.closed) throw new DispatchError('closed', 'the dispatcher is closed');
    const reports: SubscriptionReport[] = [];
    const observers = this.matching(event.type, 'observe');
    if (observers.length > 0) await this.observe(observers, event, reports, attachments);
    return reports;
  }

  /** One intercept call: request, validation, atomic staging, failure policy. */
  private async intercept(
    match: MatchedSubscription,
    pipeline: Pipeline,
    capabilities: InterceptCapabilities,
    input: DispatchInput,
  ): Promise<InterceptStep> {
    const { backend, subscription } = match;
    const supplier = { backend: backend.id, subscription: subscriptionLabel(subscription) };
    const report: SubscriptionReport = {
      backend: supplier.backend,
      subscription: supplier.subscription,
      method: 'hooks/intercept',
      status: 'accepted',
    };
    const { view, attachments } = selectContentNoting(
      pipeline.event,
      subscription.content,
      subscription.includeNative,
    );
    const advertised = narrowCapabilities(capabilities, pipeline.event, view);
    const request = (event: JsonObject) => {
      const params: JsonObject = {
        protocolVersion: SUPPORTED_PROTOCOL_VERSION,
        event,
        capabilities: advertised,
      };
      if (input.state !== undefined) params.state = input.state;
      return {
        jsonrpc: '2.0' as const,
        id: pipeline.event.id,
        method: 'hooks/intercept',
        params: params as JsonObject & { event: CanonicalEvent },
      } satisfies JsonRpcRequest;
    };
    const failed = (status: 'failed' | 'rejected', reason: string) =>
      settleFailure(pipeline, report, subscription.failurePolicy, supplier, status, reason);
    if (attachments) {
      const early = prePublicationIssues(request(view), 'intercept-request');
      if (early.length > 0) return failed('failed', `invalid request: ${describeIssues(early)}`);
    }
    // Upload before publish, under the upload budget, before the interception deadline starts.
    // A view with no attachment part has nothing to upload or turn into a gap: no publishing pass.
    const sent = attachments
      ? await publishAttachments(
          view,
          input.attachments,
          this.uploaderFor(backend, subscription),
          input.signal,
        )
      : { event: view, failures: [] as string[] };
    if (input.signal?.aborted) {
      Object.assign(report, { status: 'interrupted', reason: 'the boundary was interrupted' });
      return { pipeline, report, interrupted: true };
    }
    const message = request(sent.event);

    if (sent.failures.length > 0) {
      // Requested content that could not be published: an operational failure of this call.
      const reason = `upload: ${sent.failures.join('; ')}`;
      if (subscription.failurePolicy !== 'fail-open') return failed('failed', reason);
      report.reason = `${reason} (sent as a gap)`;
    }

    // Everything sent is validated first (the message validator, ./messages): an invalid request
    // is never sent, and the failure policy settles the call.
    const invalid = validateMessage(message, 'intercept-request');
    if (invalid.length > 0) return failed('failed', `invalid request: ${describeIssues(invalid)}`);

    let transport: BackendTransport;
    try {
      transport = this.transportFor(backend);
    } catch (error) {
      return failed('failed', `transport: ${(error as Error).message}`);
    }
    const call = await callWithDeadline(transport, message, {
      timeoutMs: effectiveTimeout(subscription.timeoutMs ?? 1000),
      interrupt: input.signal,
      maxAttempts: this.options.maxAttempts ?? 3,
      retryDelayMs: this.options.retryDelayMs ?? 25,
    });
    if (call.kind === 'interrupted' || input.signal?.aborted) {
      Object.assign(report, { status: 'interrupted', reason: 'the boundary was interrupted' });
      return { pipeline, report, interrupted: true };
    }
    if (call.kind === 'failed') return failed('failed', call.reason);

    const response = call.response;
    if (isJsonObject(response) && Object.hasOwn(response, 'error')) {
      const error = response.error;
      const code = isJsonObject(error) && typeof error.code === 'number' ? error.code : 'invalid';
      return failed('failed', `JSON-RPC error ${code}`);
    }
    const issues = validateInterceptResponse(response, message);
    if (issues.length > 0) {
      return failed('rejected', describeIssues(issues));
    }
    const result = (response as { result: { effects: unknown[] } }).result;
    const context: StageContext = { capabilities: advertised, view, supplier };
    if (this.options.hostCheck) context.hostCheck = this.options.hostCheck;
    const staged = stageResponse(pipeline, result.effects, context);
    if ('error' in staged) return failed('rejected', staged.error);
    // An edit must leave a valid event: otherwise every later call and notification would carry
    // an invalid one. The response is rejected whole; the pipeline stays as it was.
    if (staged.pipeline.event !== pipeline.event) {
      const broken = issuesAdded(pipeline.event, staged.pipeline.event);
      if (broken.length > 0) {
        return failed('rejected', `the response's edits make an invalid event: ${describeIssues(broken)}`);
      }
    }
    report.effects = result.effects.map((e) =>
      isJsonObject(e) && typeof e.type === 'string' ? e.type : '?',
    );
    // An accepted deny or flow stop ends decision-making for this boundary.
    const settles = result.effects.some(
      (e) => isJsonObject(e) && (e.type === 'deny' || (e.type === 'flow' && e.operation === 'stop')),
    );
    return { pipeline: staged.pipeline, report, settles };
  }

  /** Best-effort `hooks/observe` to each watcher, in order, under its own content selection. */
  private async observe(
    watchers: readonly MatchedSubscription[],
    effective: CanonicalEvent,
    reports: SubscriptionReport[],
    attachments: AttachmentBytes | undefined,
    derived?: string,
  ) {
    const timeoutMs = effectiveTimeout(this.options.observeTimeoutMs ?? 5000);
    const pending: Promise<void>[] = [];
    for (const { backend, subscription } of watchers) {
      const report: SubscriptionReport = {
        backend: backend.id,
        subscription: subscriptionLabel(subscription),
        method: 'hooks/observe',
        status: 'observed',
        ...(derived ? { event: derived } : {}),
      };
      reports.push(report);
      const fail = (error: unknown) => {
        report.status = 'failed';
        report.reason = error instanceof Error ? error.message : String(error);
      };
      const deliver = async () => {
        const view = selectContent(effective, subscription.content, subscription.includeNative);
        const notification = (event: JsonObject): JsonRpcNotification => ({
          jsonrpc: '2.0',
          method: 'hooks/observe',
          params: { protocolVersion: SUPPORTED_PROTOCOL_VERSION, event },
        });
        if (needsPublishing(view, attachments)) {
          const early = prePublicationIssues(notification(view), 'observe-notification');
          if (early.length > 0) throw new Error(`invalid notification: ${describeIssues(early)}`);
        }
        const sent = await publishAttachments(view, attachments, this.uploaderFor(backend, subscription));
        if (sent.failures.length > 0) report.reason = `upload: ${sent.failures.join('; ')} (sent as a gap)`;
        const message = notification(sent.event);
        const invalid = validateMessage(message, 'observe-notification');
        if (invalid.length > 0) throw new Error(`invalid notification: ${describeIssues(invalid)}`);
        const deadline = deadlineSignal(timeoutMs);
        try {
          await this.transportFor(backend).notify(message, deadline.signal);
        } finally {
          deadline.clear();
        }
      };
      pending.push(deliver().catch(fail));
    }
    await Promise.all(pending);
  }

  private detach(work: Promise<unknown>): void {
    const tracked = work.finally(() => this.detached.delete(tracked));
    this.detached.add(tracked);
  }

  /** Waits for detached observer deliveries, then closes every transport. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.detached]);
    const transports = [...this.transports.values()];
    this.transports.clear();
    await Promise.allSettled(transports.map((t) => t.close()));
  }
}

/** One-shot form: opens a dispatcher, runs one event, closes it. */
export async function dispatch(options: DispatcherOptions & DispatchInput): Promise<DispatchOutcome> {
  const dispatcher = new Dispatcher(options);
  try {
    return await dispatcher.dispatch(options);
  } finally {
    await dispatcher.close();
  }
}
