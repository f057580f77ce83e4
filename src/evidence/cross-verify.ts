/**
 * Cross-verification of a session against an agent certificate: does the identity match, did the
 * session happen inside the certificate's window, which calls fell outside the envelope or into
 * forbidden territory, which needed escalation and whether approval was recorded. Tool names go
 * through the alias table, so a certificate written for one agent checks a session of another.
 */
import type { AgentCertificate } from './certificate.js';
import {
  type ActionPolicy,
  type ActionVerdict,
  evaluateAction,
  matchAction,
  parsePattern,
} from './policy.js';
import { composeOptionsOf } from './receipt.js';
import type { EventRecord } from './record.js';

export interface ToolCallFact {
  seq: number;
  call?: string;
  tool: string;
  kind?: string;
  input?: unknown;
  /** The decision recorded with the call, if any. */
  decision?: 'allow' | 'deny' | 'ask';
  decidedBy?: string;
}

export interface JudgedCall extends ToolCallFact {
  verdict: ActionVerdict['verdict'];
  pattern?: string;
  /** The call was stopped: a deny was recorded and no `tool.after` shows it executing anyway. */
  blocked: boolean;
}

export interface EscalatedCall extends JudgedCall {
  approved: boolean;
  approvedBy?: string;
}

export interface CrossVerification {
  unauthorized: JudgedCall[];
  escalations: EscalatedCall[];
  neverCalled: string[];
  calls: number;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Tool calls as attempted (`tool.before`), with recorded decisions and later approvals. */
export function toolCallFacts(records: readonly EventRecord[]): {
  calls: ToolCallFact[];
  approvals: Map<string, string>;
  /** Call ids a `tool.after` reports as executed (not skipped). */
  executed: Set<string>;
} {
  const calls: ToolCallFact[] = [];
  const approvals = new Map<string, string>();
  const executed = new Set<string>();
  for (const record of records) {
    const event = record.event;
    const call = asRecord(event.call);
    const callId = typeof call?.id === 'string' ? call.id : undefined;
    const tool = asRecord(event.tool);
    if (event.type === 'tool.permission.resolved') {
      if (callId && event.decision === 'allow')
        approvals.set(callId, typeof event.decidedBy === 'string' ? event.decidedBy : 'unknown');
      continue;
    }
    if (event.type === 'tool.after') {
      // A deny that did not stop the call (a harness that ignored it) is not a block.
      if (callId && asRecord(event.execution)?.status !== 'skipped') executed.add(callId);
      continue;
    }
    if (event.type !== 'tool.before' || typeof tool?.name !== 'string') continue;
    const fact: ToolCallFact = { seq: record.seq, tool: tool.name };
    if (callId) fact.call = callId;
    if (typeof tool.kind === 'string') fact.kind = tool.kind;
    if (tool.input !== undefined) fact.input = tool.input;
    if (record.decision) {
      fact.decision = record.decision.decision;
      fact.decidedBy = record.decision.by;
      // An allow given by a person (not Tally's own policy) after an ask is an approval.
      if (callId && record.decision.decision === 'allow' && record.decision.by !== 'tally-policy') {
        approvals.set(callId, record.decision.by);
      }
    }
    calls.push(fact);
  }
  return { calls, approvals, executed };
}

export function certificatePolicy(certificate: AgentCertificate): ActionPolicy {
  return {
    allow: certificate.bounded_actions,
    forbid: certificate.forbidden,
    escalate: certificate.escalation_required,
  };
}

export function crossVerify(
  certificate: AgentCertificate,
  records: readonly EventRecord[],
): CrossVerification {
  const policy = certificatePolicy(certificate);
  // Relative path patterns are anchored at the session's workspace root, as recorded at start.
  const cwd = composeOptionsOf(records).root;
  const { calls, approvals, executed } = toolCallFacts(records);
  const unauthorized: JudgedCall[] = [];
  const escalations: EscalatedCall[] = [];
  for (const fact of calls) {
    const verdict = evaluateAction(policy, {
      tool: fact.tool,
      input: fact.input,
      ...(fact.kind ? { kind: fact.kind } : {}),
      ...(cwd ? { cwd } : {}),
    });
    const judged: JudgedCall = {
      ...fact,
      verdict: verdict.verdict,
      ...(verdict.pattern ? { pattern: verdict.pattern } : {}),
      blocked: fact.decision === 'deny' && !(fact.call !== undefined && executed.has(fact.call)),
    };
    if (verdict.verdict === 'forbidden' || verdict.verdict === 'outside') unauthorized.push(judged);
    if (verdict.verdict === 'escalate') {
      const approvedBy = fact.call ? approvals.get(fact.call) : undefined;
      escalations.push({
        ...judged,
        approved: approvedBy !== undefined,
        ...(approvedBy ? { approvedBy } : {}),
      });
    }
  }
  const neverCalled = certificate.bounded_actions.filter((text) => {
    const pattern = parsePattern(text);
    return !calls.some((c) =>
      matchAction(pattern, {
        tool: c.tool,
        input: c.input,
        ...(c.kind ? { kind: c.kind } : {}),
        ...(cwd ? { cwd } : {}),
      }),
    );
  });
  return { unauthorized, escalations, neverCalled, calls: calls.length };
}
