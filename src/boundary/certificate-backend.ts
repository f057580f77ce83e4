/**
 * The certificate judge as an AHP backend. It is dispatched like any third-party backend — through
 * the same Dispatcher, with a deadline and a failure policy, composed by the protocol's rules
 * (deny > ask > allow) — but it runs in-process with the session's own verified certificate. A
 * registration (a file the agent can write) may list it, to place it in the order or to give it a
 * deadline, as the stdio entry `tally ahp serve --certificate`; it can never remove it or make it
 * fail open: the harness always puts it in, fail-closed, seeing the whole event.
 */
import { basename } from 'node:path';
import {
  type BackendHandler,
  type Capabilities,
  createBackend,
  type Effect,
  type InterceptContext,
  PROTOCOL_VERSION,
} from '../ahp/backend/kit.js';
import type { Backend, Registration, Subscription } from '../ahp/registration/types.js';
import type { MemoryHandler } from '../ahp/transports/memory.js';
import { TallyError } from '../core/errors.js';
import type { AgentCertificate } from '../evidence/certificate.js';
import type { WorkspaceFrame } from '../evidence/normalize.js';
import {
  CERTIFICATE_BACKEND,
  certificatePolicy,
  certificateStateAt,
  judgeCall,
  normalizeCall,
  verdictDecision,
} from '../evidence/policy/judge.js';
import type { PolicyDecision, ResolvedPath } from '../evidence/record/record.js';

/** The default deadline of the certificate judge: generous, it answers in microseconds. */
export const CERTIFICATE_TIMEOUT_MS = 5000;
/** The events it judges. */
export const CERTIFICATE_EVENTS = ['tool.before'] as const;

export class CertificateBackendError extends TallyError<'reserved-id'> {}

/** True for the registration entry that names the certificate judge: `tally ahp serve --certificate`. */
export function isCertificateEntry(backend: Backend): boolean {
  const t = backend.transport;
  if (t.kind !== 'stdio') return false;
  const program = basename(t.command);
  return (
    (program === 'tally' || program === 'tally.js') &&
    t.args[0] === 'ahp' &&
    t.args[1] === 'serve' &&
    t.args.includes('--certificate')
  );
}

/** What the judge's subscription sees of an event: every content part whole, no `native`. */
export const JUDGE_CONTENT = { default: 'body', categories: {} } as const satisfies Subscription['content'];
/** The judge subscription's local id (its label in dispatch reports). */
export const JUDGE_SUBSCRIPTION = 'certificate';

function judgeSubscription(timeoutMs: number): Subscription {
  return {
    index: 0,
    id: JUDGE_SUBSCRIPTION,
    events: [...CERTIFICATE_EVENTS],
    mode: 'intercept',
    timeoutMs,
    failurePolicy: 'fail-closed',
    content: JUDGE_CONTENT,
    includeNative: false,
  };
}

/**
 * The registration the harness dispatches: the certificate judge where the registration lists it
 * (its deadline kept, everything else forced: fail-closed, whole event, every judged event), or
 * first when it does not. Another backend may not take its id.
 */
export function withCertificateJudge(registration: Registration | null): Registration {
  const hooks = registration?.hooks ?? [];
  const impostor = hooks.find((b) => b.id === CERTIFICATE_BACKEND && !isCertificateEntry(b));
  if (impostor) {
    throw new CertificateBackendError(
      'reserved-id',
      `/hooks/${impostor.index}/id: '${CERTIFICATE_BACKEND}' is reserved for Tally's certificate judge (an entry running 'tally ahp serve --certificate')`,
      { pointer: `/hooks/${impostor.index}/id` },
    );
  }
  const listed = hooks.findIndex(isCertificateEntry);
  const timeoutOf = (b: Backend) =>
    b.subscriptions.find((s) => s.mode === 'intercept' && s.timeoutMs !== undefined)?.timeoutMs;
  const judge = (index: number, timeoutMs: number): Backend => ({
    index,
    id: CERTIFICATE_BACKEND,
    transport: {
      kind: 'stdio',
      command: 'tally',
      args: ['ahp', 'serve', '--certificate'],
      lifecycle: 'persistent',
      env: {},
    },
    subscriptions: [judgeSubscription(timeoutMs)],
  });
  if (listed >= 0) {
    const at = hooks[listed]!;
    const out = [...hooks];
    out[listed] = judge(at.index, timeoutOf(at) ?? CERTIFICATE_TIMEOUT_MS);
    return { protocolVersion: 'draft', hooks: out };
  }
  // Not listed: first, so a later backend's modification never reaches the judge unseen.
  return { protocolVersion: 'draft', hooks: [judge(-1, CERTIFICATE_TIMEOUT_MS), ...hooks] };
}

export interface JudgeContext {
  certificate: AgentCertificate;
  frame: WorkspaceFrame;
  now: () => Date;
  /** Paths the boundary resolved through links for the event being judged, by event id. */
  resolvedFor?: (eventId: string) => readonly ResolvedPath[];
  /** Told the decision the judge reached for an event (the boundary records its rule and reason). */
  onDecision?: (eventId: string, decision: PolicyDecision) => void;
}

/** The judge's decision on one event (undefined: not a tool call it can read). */
export function judgeEvent(
  context: JudgeContext,
  event: Record<string, unknown>,
): PolicyDecision | undefined {
  const state = certificateStateAt(context.certificate, context.now());
  if (state !== 'valid') {
    // Fail closed: an expired certificate allows nothing live.
    return {
      decision: 'deny',
      by: CERTIFICATE_BACKEND,
      reason:
        state === 'expired' ? 'the agent certificate has expired' : 'the agent certificate is not valid yet',
    };
  }
  const id = typeof event.id === 'string' ? event.id : '';
  const resolved = context.resolvedFor?.(id) ?? [];
  const call = normalizeCall(event, context.frame, resolved);
  if (call === undefined) return undefined;
  return verdictDecision(judgeCall(certificatePolicy(context.certificate), call, resolved));
}

/** The AHP effects of a decision, within what the request advertised. */
export function effectsOf(decision: PolicyDecision, advertised: readonly string[]): Effect[] {
  const reason = decision.rule ? `${decision.reason}: ${decision.rule}` : (decision.reason ?? 'denied');
  if (decision.decision === 'deny') return [{ type: 'deny', reason }];
  if (decision.decision === 'ask') {
    // Where no one can be asked, an escalation is refused, never allowed.
    if (!advertised.includes('ask')) return [{ type: 'deny', reason }];
    return advertised.includes('message')
      ? [{ type: 'ask' }, { type: 'message', text: reason }]
      : [{ type: 'ask' }];
  }
  return advertised.includes('allow') ? [{ type: 'allow' }] : [];
}

/** The judge as a backend-kit handler: validated requests in, validated answers out. */
export function certificateHandler(context: JudgeContext): BackendHandler {
  return {
    interceptEvents: [...CERTIFICATE_EVENTS],
    intercept: ({ event, capabilities }) => {
      const decision = judgeEvent(context, event);
      if (decision === undefined)
        return [{ type: 'deny', reason: 'the call could not be read to be judged' }];
      context.onDecision?.(event.id, decision);
      return effectsOf(decision, capabilities.effects);
    },
  };
}

/**
 * The judge behind an in-process transport that shares messages (transports/memory `shared`). An
 * intercept is answered here directly: the dispatcher validated the request before sending it and
 * validates this answer when it arrives, so the backend kit's own checks of both would repeat the
 * same work on the same objects; anything else (observations, unknown methods) goes through the kit.
 */
export function certificateTransportHandler(context: JudgeContext): MemoryHandler {
  const judge = certificateHandler(context);
  const kit = createBackend(judge);
  return (message) => {
    const params = message.params as InterceptContext['params'] | undefined;
    if (message.method !== 'hooks/intercept' || !('id' in message) || params === undefined)
      return kit.handleMessage(message);
    const event = params.event as InterceptContext['event'];
    const capabilities = params.capabilities as Capabilities;
    if (event?.type !== 'tool.before' || !Array.isArray(capabilities?.effects))
      return kit.handleMessage(message);
    let effects: readonly Effect[];
    try {
      effects = judge.intercept!({ event, capabilities, params }) as readonly Effect[];
    } catch {
      return {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32004, message: 'backend failed while evaluating' },
      };
    }
    return { jsonrpc: '2.0', id: message.id, result: { protocolVersion: PROTOCOL_VERSION, effects } };
  };
}
