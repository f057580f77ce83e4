/**
 * The certificate judge when it is the session's only backend (no registration, or one that lists
 * nothing but `tally ahp serve --certificate`): its answer composed by the dispatcher's own rules
 * (../ahp/harness/compose.ts: the same advertisement, content view, staging and settlement), without
 * the dispatcher's transport, deadline and message validation. Those exist for a backend outside
 * this code: here the request is built from an event the boundary has just validated and the answer
 * from the judge's own effects, so validating both again proves nothing, and an in-process judge
 * that answers synchronously cannot miss a deadline. Whenever the shortcut could differ from the
 * dispatcher — an event with fields this AHP snapshot does not define (the request validation
 * refuses those), a view that may hold an attachment part (publishing), a judge wrapped by a test —
 * the boundary dispatches instead. test/boundary/judge-alone.test.ts holds both paths to the same
 * answers and records over the AHP interop corpus.
 */
import {
  type InterceptCapabilities,
  type Pipeline,
  stageResponse,
  startPipeline,
} from '../ahp/harness/compose.js';
import { selectContentNoting } from '../ahp/harness/content.js';
import { settledOutcome, settleFailure } from '../ahp/harness/dispatcher.js';
import { narrowCapabilities } from '../ahp/harness/narrowing.js';
import type { DispatchOutcome, SubscriptionReport } from '../ahp/harness/types.js';
import { eventCapabilities } from '../ahp/protocol/capabilities.js';
import type { CanonicalEvent } from '../core/event.js';
import type { JsonObject } from '../core/json.js';
import { CERTIFICATE_BACKEND } from '../evidence/policy/judge.js';
import {
  CERTIFICATE_EVENTS,
  effectsOf,
  JUDGE_CONTENT,
  JUDGE_SUBSCRIPTION,
  type JudgeContext,
  judgeEvent,
} from './certificate-backend.js';

const SUPPLIER = { backend: CERTIFICATE_BACKEND, subscription: JUDGE_SUBSCRIPTION };
const JUDGED: ReadonlySet<string> = new Set(CERTIFICATE_EVENTS);

/**
 * The settled outcome of one interceptable event with the judge as the only interceptor, or
 * undefined where only the dispatcher gives the exact answer (the caller dispatches). `clean`: the
 * event was validated without a single issue, unknown fields included.
 */
export function judgeAlone(
  context: JudgeContext,
  event: CanonicalEvent,
  clean: boolean,
): DispatchOutcome | undefined {
  if (!JUDGED.has(event.type)) return settledOutcome(startPipeline(event), undefined, []);
  if (!clean) return undefined;
  const started = performance.now();
  const capabilities = eventCapabilities(event);
  if (capabilities === undefined) return undefined;
  const { view, attachments } = selectContentNoting(event as JsonObject, JUDGE_CONTENT, false);
  if (attachments) return undefined;
  const advertised: InterceptCapabilities = narrowCapabilities(capabilities, event, view);
  const report: SubscriptionReport = {
    backend: CERTIFICATE_BACKEND,
    subscription: JUDGE_SUBSCRIPTION,
    method: 'hooks/intercept',
    status: 'accepted',
  };
  const decision = judgeEvent(context, view);
  if (decision !== undefined) context.onDecision?.(event.id, decision);
  const effects =
    decision === undefined
      ? [{ type: 'deny', reason: 'the call could not be read to be judged' }]
      : effectsOf(decision, advertised.effects);
  const pipeline = startPipeline(event);
  const staged = stageResponse(pipeline, effects, { capabilities: advertised, view, supplier: SUPPLIER });
  let settled: Pipeline;
  if ('error' in staged) {
    // The dispatcher's rejection of an answer it cannot stage, by the judge's failure policy.
    settled = settleFailure(pipeline, report, 'fail-closed', SUPPLIER, 'rejected', staged.error).pipeline;
  } else {
    settled = staged.pipeline;
    report.effects = effects.map((e) => e.type);
  }
  report.latencyMs = Math.round(performance.now() - started);
  return settledOutcome(settled, capabilities, [report]);
}
