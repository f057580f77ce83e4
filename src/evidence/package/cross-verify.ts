/**
 * Cross-verification of a session against an agent certificate: does the identity match, did the
 * session happen inside the certificate's window, which calls fell outside the envelope or into
 * forbidden territory, which needed escalation and whether approval was recorded. Tool names go
 * through the alias table, so a certificate written for one agent checks a session of another.
 */

import { canonicalize } from '../../core/canonical.js';
import { trustKeys } from '../../core/dsse.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { approvalEnvelope, approvedInputDigest, verifyApproval } from '../approval.js';
import type { AgentCertificate } from '../certificate.js';
import { controlPlanePlaces, EXT_OPAQUE, sessionWorkspace, stringField } from '../normalize.js';
import { actionCall, certificatePolicy, judgeCall } from '../policy/judge.js';
import { type ActionVerdict, matchAction, parsePattern } from '../policy/patterns.js';
import type { EventRecord, ResolvedPath } from '../record/record.js';

export interface ToolCallFact {
  /** The first record that showed the call (its tool.before, or its tool.after if none). */
  seq: number;
  call?: string;
  tool: string;
  kind?: string;
  input?: unknown;
  /** Where the call ran (its event's `session.cwd`) and why it is opaque, as its record says. */
  cwd?: string;
  opaque?: string;
  /** Where its paths lead through links, as the boundary recorded them. */
  resolved?: ResolvedPath[];
  /** The decision recorded with the call, if any. */
  decision?: 'allow' | 'deny' | 'ask';
  decidedBy?: string;
  /** A `tool.after` reports the call as executed (not skipped). */
  executed: boolean;
  /**
   * Every distinct (tool, kind, input) the call's records reported, in order, when there is more
   * than one: a `tool.after` that reports another input than its `tool.before` (`input_changed`).
   */
  reports?: CallReport[];
}

/** One tool and input a call reported. */
export interface CallReport {
  seq: number;
  tool: string;
  kind?: string;
  input?: unknown;
  cwd?: string;
  opaque?: string;
  resolved?: ResolvedPath[];
}

type CallContext = { cwd?: string; opaque?: string; resolved?: ResolvedPath[] };

/** Where a tool event's call ran, why it is opaque and where its paths lead, as the record says (what the live judge read). */
function callContext(record: EventRecord): CallContext {
  const cwd = stringField(record.event.session, 'cwd');
  const opaque = stringField(record.event.extensions, EXT_OPAQUE);
  const resolved = record.resolved;
  return {
    ...(cwd ? { cwd } : {}),
    ...(opaque ? { opaque } : {}),
    ...(resolved && resolved.length > 0 ? { resolved } : {}),
  };
}

export interface JudgedCall extends ToolCallFact {
  verdict: ActionVerdict['verdict'];
  pattern?: string;
  /** The call reported more than one input; the verdict is the worst of them. */
  inputChanged?: true;
  /**
   * A deny was recorded and no `tool.after` shows the call executing. This rests on the harness
   * honouring the deny (Tally's AHP dispatcher does); it is reported as such, not as proof.
   */
  blocked: boolean;
}

export interface EscalatedCall extends JudgedCall {
  approved: boolean;
  approvedBy?: string;
  /** `approver`: signed; `harness`: only asserted by the harness. */
  approval?: 'approver' | 'harness';
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

/** How an escalated call came to be approved: a signed approval, or the harness's own report. */
export interface ApprovalFact {
  /** `approver`: signed with a pinned approver key; `harness`: the call ran after the harness asked (asserted by the harness). */
  kind: 'approver' | 'harness';
  by: string;
  /** The input digest a signed approval covers, when it names one. */
  input?: string;
}

export interface CrossOptions {
  /** Pinned approver keys: only approvals they signed count. */
  approvers?: readonly PublicKeyInput[];
}

/**
 * One fact per tool call, whichever events showed it: a call is identified by its event source and
 * `call.id` (records without a call id are calls of their own). A call seen only through its
 * `tool.after` is judged too: what ran must be judged whether or not its start was captured.
 * Approvals come only from channels the agent cannot write (docs/security.md): an approval signed
 * by a pinned approver key, or the harness running a call after it asked (asserted by it, and
 * reported as only that). A `tool.permission.resolved` event — which the agent's own hook channel
 * can send — approves nothing.
 */
export function toolCallFacts(
  records: readonly EventRecord[],
  options: CrossOptions = {},
): { calls: ToolCallFact[]; approvals: Map<string, ApprovalFact> } {
  const calls: ToolCallFact[] = [];
  const byId = new Map<string, ToolCallFact>();
  const approvals = new Map<string, ApprovalFact>();
  const asked = new Set<ToolCallFact>();
  const approvers =
    options.approvers && options.approvers.length > 0 ? trustKeys(options.approvers) : undefined;
  const session = records[0]?.session;
  for (const record of records) {
    const event = record.event;
    const envelope = approvalEnvelope(event);
    if (envelope !== undefined) {
      if (approvers === undefined) continue;
      try {
        const approval = verifyApproval(envelope, approvers);
        if (approval.session === session && approval.decision === 'allow')
          approvals.set(approval.call, {
            kind: 'approver',
            by: approval.approver,
            ...(approval.input !== undefined ? { input: approval.input } : {}),
          });
      } catch {
        // Not signed by a pinned approver: recorded, and counts for nothing.
      }
      continue;
    }
    const callId = asRecord(event.call)?.id;
    const key = typeof callId === 'string' ? `${event.source}\u0000${callId}` : undefined;
    if (event.type !== 'tool.before' && event.type !== 'tool.after') continue;
    const tool = asRecord(event.tool);
    let fact = key === undefined ? undefined : byId.get(key);
    if (!fact) {
      if (typeof tool?.name !== 'string') continue;
      fact = { seq: record.seq, tool: tool.name, executed: false };
      if (typeof callId === 'string') fact.call = callId;
      if (typeof tool.kind === 'string') fact.kind = tool.kind;
      if (tool.input !== undefined) fact.input = tool.input;
      Object.assign(fact, callContext(record));
      calls.push(fact);
      if (key !== undefined) byId.set(key, fact);
    } else if (tool !== undefined && (tool.input !== undefined || typeof tool.name === 'string'))
      addReport(fact, record.seq, tool, callContext(record));
    if (event.type === 'tool.after') {
      if (asRecord(event.execution)?.status !== 'skipped') {
        fact.executed = true;
        // The harness ran a call after it was asked about it: approved there, as the harness says.
        if (asked.has(fact) && typeof callId === 'string' && !approvals.has(callId))
          approvals.set(callId, { kind: 'harness', by: 'approved_in_harness' });
      }
      continue;
    }
    if (record.decision) {
      fact.decision = record.decision.decision;
      fact.decidedBy = record.decision.by;
      if (record.decision.decision === 'ask') asked.add(fact);
    }
  }
  return { calls, approvals };
}

/** Adds what a later record of a call reported, when it is not what the call already reported. */
function addReport(
  fact: ToolCallFact,
  seq: number,
  tool: Record<string, unknown>,
  context: CallContext,
): void {
  const first: CallReport = {
    seq: fact.seq,
    tool: fact.tool,
    ...(fact.kind ? { kind: fact.kind } : {}),
    ...(fact.input !== undefined ? { input: fact.input } : {}),
    ...(fact.cwd ? { cwd: fact.cwd } : {}),
    ...(fact.opaque ? { opaque: fact.opaque } : {}),
    ...(fact.resolved ? { resolved: fact.resolved } : {}),
  };
  const report: CallReport = {
    seq,
    tool: typeof tool.name === 'string' ? tool.name : fact.tool,
    ...(typeof tool.kind === 'string' ? { kind: tool.kind } : fact.kind ? { kind: fact.kind } : {}),
    // An after that omits the input reports the input the call started with.
    ...(tool.input !== undefined
      ? { input: tool.input }
      : fact.input !== undefined
        ? { input: fact.input }
        : {}),
    ...context,
  };
  const same = (a: CallReport, b: CallReport) =>
    canonicalize([a.tool, a.kind ?? null, a.input ?? null]) ===
    canonicalize([b.tool, b.kind ?? null, b.input ?? null]);
  const reports = fact.reports ?? [first];
  if (reports.some((r) => same(r, report))) return;
  fact.reports = [...reports, report];
}

/** Worst first: a call is judged by the worst thing it reported. */
const VERDICT_RANK: Record<ActionVerdict['verdict'], number> = {
  forbidden: 0,
  outside: 1,
  escalate: 2,
  allowed: 3,
};

export function crossVerify(
  certificate: AgentCertificate,
  records: readonly EventRecord[],
  options: CrossOptions = {},
): CrossVerification {
  const policy = certificatePolicy(certificate);
  // Relative path patterns are anchored at the session's workspace root, as recorded at start;
  // the control plane lies under it and under the homes the start recorded.
  const workspace = sessionWorkspace(records).frame;
  const cwd = workspace.root;
  const frame = { ...(cwd ? { root: cwd } : {}), ...controlPlanePlaces(workspace) };
  const { calls, approvals } = toolCallFacts(records, options);
  const unauthorized: JudgedCall[] = [];
  const escalations: EscalatedCall[] = [];
  for (const fact of calls) {
    // Every input the call reported is judged; the worst verdict is the call's.
    let verdict: ActionVerdict | undefined;
    let worst: CallReport | undefined;
    for (const report of fact.reports ?? [fact]) {
      // The call the live judge read: run in its event's own cwd, opaque as its record says.
      const tool = { name: report.tool, input: report.input, ...(report.kind ? { kind: report.kind } : {}) };
      const v = judgeCall(policy, actionCall(tool, frame, report.cwd ?? cwd, report.opaque), report.resolved);
      if (verdict === undefined || VERDICT_RANK[v.verdict] < VERDICT_RANK[verdict.verdict]) {
        verdict = v;
        worst = report;
      }
    }
    if (verdict === undefined || worst === undefined) continue;
    const judged: JudgedCall = {
      ...fact,
      tool: worst.tool,
      ...(worst.input !== undefined ? { input: worst.input } : {}),
      ...(fact.reports ? { inputChanged: true as const } : {}),
      verdict: verdict.verdict,
      ...(verdict.pattern ? { pattern: verdict.pattern } : {}),
      // A call denied (or asked, and never run: headless harnesses refuse an ask) did not happen.
      blocked:
        (fact.decision === 'deny' || (verdict.verdict === 'escalate' && fact.decision === 'ask')) &&
        !fact.executed,
    };
    if (verdict.verdict === 'forbidden' || verdict.verdict === 'outside') unauthorized.push(judged);
    if (verdict.verdict === 'escalate') {
      const found = fact.call ? approvals.get(fact.call) : undefined;
      // A signed approval covers the input the person saw: another input under the same call id is not approved.
      const approval =
        found?.input !== undefined && found.input !== approvedInputDigest(fact.input) ? undefined : found;
      escalations.push({
        ...judged,
        approved: approval !== undefined,
        ...(approval ? { approvedBy: approval.by, approval: approval.kind } : {}),
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
