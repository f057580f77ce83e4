/**
 * The relay's sink over a boundary in this process (the gateway's own session), and the one
 * reading of a boundary decision both sinks share: a deny is a denial; an `ask` is a denial too,
 * because no one can be asked on the MCP wire; an allow may carry new arguments or a supplied result.
 */
import type { Boundary, BoundaryDecision, EventContext } from '../../boundary/boundary.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import type { GatewaySink, GatewayVerdict } from './relay.js';

/** What a denied call's result text says: who denied it, why, and the pattern that matched. */
export function denialText(decision: Pick<BoundaryDecision, 'decision' | 'reason' | 'by' | 'rule'>): string {
  const why = decision.reason ?? 'denied by policy';
  const rule = decision.rule ? ` (${decision.rule})` : '';
  const by = decision.by ? ` by ${decision.by}` : '';
  const ask =
    decision.decision === 'ask' ? '; it needs a person’s approval, which the MCP gateway cannot ask for' : '';
  return `Tally denied this call${by}: ${why}${rule}${ask}`;
}

export function verdictOf(
  decision: Pick<BoundaryDecision, 'decision' | 'reason' | 'by' | 'rule' | 'effects'>,
): GatewayVerdict {
  if (decision.decision !== 'allow') return { allow: false, reason: denialText(decision) };
  const effects = decision.effects;
  return {
    allow: true,
    ...(effects && isJsonObject(effects.input) ? { input: effects.input as JsonObject } : {}),
    ...(effects && effects.result !== undefined ? { result: effects.result } : {}),
  };
}

export function boundarySink(boundary: Boundary, context: EventContext): GatewaySink {
  return {
    async decide(event) {
      return verdictOf(await boundary.decide(event, context));
    },
    async observe(event) {
      await boundary.observe(event, context);
    },
  };
}
