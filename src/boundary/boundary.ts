/**
 * The boundary: the one place where a captured event is prepared, judged, recorded and answered.
 * Every capture channel (native hooks, the MCP gateway, `tally wrap`, reconciliation, the CLI)
 * calls `decide` for an event that can still be stopped and `observe` for one that already
 * happened. The sequence is fixed: prepare (fill, redact, validate) → judge (the certificate and
 * every registered AHP backend, through one dispatcher) → record (the event as received and every
 * answer, durable before anything is answered) → answer. The certificate judge alone, with no
 * other backend registered, is composed by the dispatcher's rules without its transport
 * (./judge-alone.ts).
 */
import type { Harness, HarnessOptions } from '../ahp/harness/harness.js';
import { createHarness } from '../ahp/harness/harness.js';
import type { DispatchOutcome } from '../ahp/harness/types.js';
import { catalogueEntry } from '../ahp/protocol/catalogue.js';
import type { Registration } from '../ahp/registration/types.js';
import type { MemoryHandler } from '../ahp/transports/memory.js';
import type { CanonicalEvent } from '../core/event.js';
import type { AgentCertificate } from '../evidence/certificate.js';
import type { RecordStore } from '../evidence/log/store.js';
import { type ControlPlanePlaces, controlPlanePlaces, type WorkspaceFrame } from '../evidence/normalize.js';
import { CERTIFICATE_BACKEND, normalizeCall } from '../evidence/policy/judge.js';
import { type AppendInput, type ChainHead, RecordChain } from '../evidence/record/chain.js';
import { CLOSE_SOURCES } from '../evidence/record/close-passes.js';
import type { Signer } from '../evidence/record/codec.js';
import type {
  AgentAttribution,
  BackendAnswer,
  EventRecord,
  PolicyDecision,
  ResolvedPath,
} from '../evidence/record/record.js';
import { redactValue } from '../evidence/redact.js';
import { CallInputs } from './call-inputs.js';
import {
  certificateTransportHandler,
  type JudgeContext,
  judgeEvent,
  withCertificateJudge,
} from './certificate-backend.js';
import { judgeAlone } from './judge-alone.js';
import { resolveLinks } from './links.js';
import { BoundaryError, firstIssue, prepareEvent, type Rejection, rejectedEvent } from './prepare.js';

export interface Clock {
  now(): Date;
}

const systemClock: Clock = { now: () => new Date() };

/** Where an event came from: the channel's provenance label, and the agent it is attributed to. */
export interface EventContext {
  /** `hook`, `ahp`, `mcp`, `wrap`, `cli`, `recorder` (`git-reconcile` and `transcript` are the close's alone). */
  source: string;
  agent?: AgentAttribution;
  /**
   * observe only: what the agent was already told without the boundary (a shim that found the
   * recorder down answered by the failure policy); recorded as the event's decision.
   */
  answered?: PolicyDecision;
}

export interface Recorded {
  seq: number;
  digest: string;
}

/** The composed effects a channel turns into its native answer. */
export interface BoundaryEffects {
  /** The tool input after every accepted modification, when one changed it. */
  input?: unknown;
  /** Messages for the agent or the user, in order. */
  messages: string[];
  /** Context injections, in order. */
  injections: unknown[];
  /** A supplied result (the call does not run; this is its return value), when one was given. */
  result?: unknown;
}

export interface BoundaryDecision {
  /** What the agent is told: `allow` when no one objected (see `permission`), else deny or ask. */
  decision: 'allow' | 'deny' | 'ask';
  /** The raw AHP permission: `none` means no backend gave an opinion (the agent's own flow decides). */
  permission: 'none' | 'allow' | 'ask' | 'deny';
  /** Why, when denied or escalated: the reason safe to show the model. */
  reason?: string;
  /** Who settled it (a backend id), when someone did, and the certificate pattern that matched. */
  by?: string;
  rule?: string;
  /** JSON pointers of fields this AHP snapshot does not define (kept as received). */
  unknownFields: string[];
  effects: BoundaryEffects;
  answers: BackendAnswer[];
  recorded: Recorded;
  /** The input was refused as invalid (recorded as `tally.ingest.rejected`). */
  rejected?: true;
}

export interface BoundaryOptions {
  /**
   * The session this boundary records: its id, the workspace its paths are relative to, and the
   * user's home and Tally's as its start recorded them (where the agents' control plane lies).
   */
  session: {
    id: string;
    root: string;
    agent?: AgentAttribution;
    /** Where the control plane lies, as the session's signed start recorded it. */
    places?: ControlPlanePlaces;
  };
  /** The store of the session's log; the boundary keeps the chain over it. */
  store: RecordStore;
  signer: Signer;
  /** The verified certificate the session runs under; null: recorded, not judged by one. */
  certificate: AgentCertificate | null;
  /** The registration of third-party backends (already parsed and bound to the session), if any. */
  registration: Registration | null;
  /** How the harness reaches backends: environment, OAuth clients, logger. */
  harness: HarnessOptions;
  clock?: Clock;
  /**
   * Wraps the certificate judge's in-process transport handler (tests slow it down to hold its
   * deadline and failure policy to account); the judge itself cannot be replaced.
   */
  wrapJudge?: (handler: MemoryHandler) => MemoryHandler;
  /** Told of every record once it is durable (the recorder's live witness). Must not throw. */
  onRecorded?: (recorded: Recorded, time: Date) => void;
}

export interface Boundary {
  decide(event: unknown, context: EventContext): Promise<BoundaryDecision>;
  observe(event: unknown, context: EventContext): Promise<{ recorded: Recorded; unknownFields: string[] }>;
  /** Records input a channel could not even parse (bytes that are not JSON, not UTF-8). */
  reject(rejection: Rejection, context: EventContext): Promise<{ recorded: Recorded }>;
  /** Records an event Tally itself makes (session start and end, reconciliation summaries). */
  note(input: AppendInput): Promise<Recorded>;
  /** The head of the last durable record (one whose write failed is not counted). */
  readonly head: ChainHead | null;
  /** A write to the store failed: every append is refused until the log is opened again. */
  readonly failed: boolean;
  readonly lastRecord: EventRecord | null;
  readonly size: number;
  /** The record version this session's log holds. */
  readonly recordVersion: 1 | 2;
  /** Closes the harness (backend connections); the store is the caller's. */
  close(): Promise<void>;
}

const NO_EFFECTS: BoundaryEffects = { messages: [], injections: [] };

/** One backend's answer from its subscription report. */
function answerOf(report: DispatchOutcome['subscriptions'][number]): BackendAnswer | undefined {
  if (report.method !== 'hooks/intercept') return undefined;
  const status = report.status === 'observed' ? 'accepted' : report.status;
  let decision: BackendAnswer['decision'] = 'none';
  if (status === 'accepted') {
    const effects = report.effects ?? [];
    decision = effects.includes('deny')
      ? 'deny'
      : effects.includes('ask')
        ? 'ask'
        : effects.includes('allow')
          ? 'allow'
          : 'none';
  } else if (status !== 'interrupted') decision = report.failurePolicy === 'fail-open' ? 'none' : 'deny';
  return {
    backend: report.backend,
    decision,
    status,
    latency_ms: report.latencyMs ?? 0,
    ...(report.failurePolicy && status !== 'accepted' ? { failure_policy: report.failurePolicy } : {}),
    ...(report.effects && report.effects.length > 0 ? { effects: report.effects } : {}),
    ...(report.reason ? { reason: report.reason } : {}),
  };
}

export function openBoundary(options: BoundaryOptions): Boundary {
  const clock = options.clock ?? systemClock;
  const { session, store, signer } = options;
  const chain = RecordChain.resume(store.lastLine(), { session: session.id, signer }, 'the session log');
  const frame: WorkspaceFrame = {
    root: session.root,
    cwd: session.root,
    ...controlPlanePlaces(session.places ?? {}),
  };
  const resolvedByEvent = new Map<string, readonly ResolvedPath[]>();
  const judged = new Map<string, PolicyDecision>();
  const certificate = options.certificate;
  const registration =
    certificate === null ? options.registration : withCertificateJudge(options.registration);
  const judgeContext: JudgeContext | null =
    certificate === null
      ? null
      : {
          certificate,
          frame,
          now: () => clock.now(),
          resolvedFor: (id) => resolvedByEvent.get(id) ?? [],
          onDecision: (id, decision) => judged.set(id, decision),
        };
  const harness: Harness | null =
    registration === null || registration.hooks.length === 0
      ? null
      : createHarness(registration, {
          ...options.harness,
          inProcess: (backend) =>
            backend.id === CERTIFICATE_BACKEND && judgeContext !== null
              ? {
                  handler: (options.wrapJudge ?? ((h) => h))(certificateTransportHandler(judgeContext)),
                  shared: true,
                }
              : options.harness.inProcess?.(backend),
        });
  // The judge as the only backend answers without the dispatcher's transport (./judge-alone.ts).
  const judgeOnly =
    judgeContext !== null && harness !== null && registration?.hooks.length === 1 && !options.wrapJudge
      ? judgeContext
      : null;
  let failure: Error | null = null;
  let closed = false;
  /** The last durable record: a record whose write failed advanced the chain, never this. */
  let durable: ChainHead | null = chain.head;
  const calls = new CallInputs();
  /**
   * What the certificate says of the input a changed tool.after reports it ran: recorded as the
   * after's decision when it is not allow (the call already ran; the verifier counts it too).
   */
  const judgeExecuted = (event: CanonicalEvent): PolicyDecision | undefined => {
    if (certificate === null) return undefined;
    const verdict = judgeEvent({ certificate, frame, now: () => clock.now() }, event);
    if (verdict === undefined || verdict.decision === 'allow') return undefined;
    return {
      ...verdict,
      reason: `the call ran with another input than the one judged: ${verdict.reason ?? verdict.decision}`,
    };
  };

  /** One record, durable before this resolves. A store failure stops the boundary. */
  async function append(input: AppendInput): Promise<Recorded> {
    if (closed) throw new BoundaryError('closed', `the boundary of session ${session.id} is closed`);
    if (failure) throw failure;
    const time = clock.now();
    const link = chain.next(input, time);
    try {
      await store.append([link.line], { seq: link.record.seq, digest: link.digest });
    } catch (error) {
      failure = error as Error;
      throw error;
    }
    const recorded = { seq: link.record.seq, digest: link.digest };
    if (durable === null || recorded.seq > durable.seq) durable = recorded;
    options.onRecorded?.(recorded, time);
    return recorded;
  }

  const agentOf = (context: EventContext) => context.agent ?? session.agent;
  // An attribution is input like any other (a name typed on a command line, a harness's field):
  // redacted before it is recorded.
  const withAgent = (context: EventContext) => {
    const agent = agentOf(context);
    return agent ? { agent: redactValue(agent) as AgentAttribution } : {};
  };

  /** The close's own sources are the close's: a channel naming one is refused, nothing recorded. */
  function channelSource(context: EventContext): void {
    if (CLOSE_SOURCES.has(context.source))
      throw new BoundaryError(
        'close-source',
        `source '${context.source}' is written only by the close's own pass: a channel's event cannot claim it`,
        { source: context.source },
      );
  }

  async function reject(rejection: Rejection, context: EventContext): Promise<{ recorded: Recorded }> {
    channelSource(context);
    const event = rejectedEvent(rejection, session.id, clock.now());
    return { recorded: await append({ source: context.source, event, ...withAgent(context) }) };
  }

  /** Prepared, or recorded as rejected. */
  async function prepared(
    raw: unknown,
    context: EventContext,
  ): Promise<
    { event: CanonicalEvent; unknownFields: string[] } | { error: BoundaryError; recorded: Recorded }
  > {
    channelSource(context);
    try {
      return prepareEvent(raw, session.id, clock.now());
    } catch (error) {
      if (!(error instanceof BoundaryError) || error.code !== 'bad-event') throw error;
      const at = firstIssue(error);
      const { recorded } = await reject(
        {
          received: raw,
          reason: error.message,
          source: context.source,
          ...(at ? { pointer: at.pointer } : {}),
        },
        context,
      );
      return { error, recorded };
    }
  }

  function settled(
    outcome: DispatchOutcome,
    answers: BackendAnswer[],
    eventId: string,
  ): PolicyDecision | undefined {
    const judge = judged.get(eventId);
    const fromJudge = (d: PolicyDecision): PolicyDecision =>
      judge && d.by === CERTIFICATE_BACKEND
        ? {
            ...d,
            ...(judge.reason ? { reason: judge.reason } : {}),
            ...(judge.rule ? { rule: judge.rule } : {}),
          }
        : d;
    if (outcome.denial) {
      const d = outcome.denial;
      return fromJudge({
        decision: 'deny',
        by: d.backend,
        reason: d.synthetic
          ? `${d.backend} failed and fails closed: ${answers.find((a) => a.backend === d.backend)?.reason ?? 'no answer'}`
          : d.reason,
      });
    }
    const permission = outcome.permission;
    if (permission === 'none') return undefined;
    const by = answers.find((a) => a.decision === permission)?.backend ?? 'harness';
    return fromJudge({ decision: permission, by });
  }

  return {
    async decide(raw, context) {
      const ready = await prepared(raw, context);
      if ('error' in ready) {
        return {
          decision: 'deny',
          permission: 'deny',
          reason: ready.error.message,
          by: 'dev.tally.boundary',
          effects: NO_EFFECTS,
          answers: [],
          recorded: ready.recorded,
          rejected: true,
          unknownFields: [],
        };
      }
      const event = ready.event;
      if (event.type === 'tool.before') calls.before(event);
      // A harness may let a tool.after be intercepted (Claude Code's PostToolUse): compared the same.
      const changed = event.type === 'tool.after' && calls.changed(event);
      const call = event.type.startsWith('tool.') ? normalizeCall(event, frame) : undefined;
      const resolved = call ? resolveLinks(call) : [];
      if (resolved.length > 0) resolvedByEvent.set(event.id, resolved);
      let outcome: DispatchOutcome | null = null;
      let failureReason: string | undefined;
      try {
        if (harness !== null && catalogueEntry(event.type)?.interceptable)
          outcome =
            (judgeOnly && judgeAlone(judgeOnly, event, ready.unknownFields.length === 0)) ||
            (await harness.dispatch({ event }));
      } catch (error) {
        // An interceptable event that cannot be judged is denied.
        failureReason = `the event could not be judged: ${(error as Error).message}`;
      } finally {
        resolvedByEvent.delete(event.id);
      }
      const answers = outcome
        ? outcome.subscriptions.map(answerOf).filter((a): a is BackendAnswer => a !== undefined)
        : [];
      const settledDecision: PolicyDecision | undefined =
        failureReason !== undefined
          ? { decision: 'deny', by: 'dev.tally.boundary', reason: failureReason }
          : outcome
            ? settled(outcome, answers, event.id)
            : undefined;
      const executed = changed ? judgeExecuted(event) : undefined;
      const decision =
        executed !== undefined && (settledDecision === undefined || settledDecision.decision === 'allow')
          ? executed
          : settledDecision;
      judged.delete(event.id);
      const recorded = await append({
        source: context.source,
        event,
        ...withAgent(context),
        ...(decision ? { decision } : {}),
        ...(answers.length > 0 ? { answers } : {}),
        ...(resolved.length > 0 ? { resolved } : {}),
        ...(changed ? { flags: ['input_changed' as const] } : {}),
      });
      const permission = decision?.decision ?? 'none';
      // The input is the channel's to change only when an accepted answer modified it.
      const modified = answers.some((a) => a.status === 'accepted' && a.effects?.includes('modify'));
      // A backend's modification is what the call will run with: the after is compared with it.
      if (modified && outcome?.input !== undefined && event.type === 'tool.before')
        calls.before({
          ...event,
          tool: { ...(event.tool as Record<string, unknown>), input: outcome.input },
        });
      const effects: BoundaryEffects = outcome
        ? {
            ...(modified && outcome.input !== undefined ? { input: outcome.input } : {}),
            messages: outcome.messages,
            injections: outcome.injections ?? [],
            ...('result' in outcome ? { result: outcome.result } : {}),
          }
        : NO_EFFECTS;
      return {
        decision: permission === 'none' ? 'allow' : permission,
        permission,
        ...(decision?.reason && permission !== 'allow' ? { reason: decision.reason } : {}),
        ...(decision ? { by: decision.by } : {}),
        ...(decision?.rule ? { rule: decision.rule } : {}),
        unknownFields: ready.unknownFields,
        effects,
        answers,
        recorded,
      };
    },

    async observe(raw, context) {
      const ready = await prepared(raw, context);
      if ('error' in ready) throw Object.assign(ready.error, { recorded: ready.recorded });
      const event: CanonicalEvent = ready.event;
      if (event.type === 'tool.before') calls.before(event);
      const changed = event.type === 'tool.after' && calls.changed(event);
      const call = event.type.startsWith('tool.') ? normalizeCall(event, frame) : undefined;
      const resolved = call ? resolveLinks(call) : [];
      const decision = context.answered ?? (changed ? judgeExecuted(event) : undefined);
      const recorded = await append({
        source: context.source,
        event,
        ...withAgent(context),
        ...(decision ? { decision } : {}),
        ...(resolved.length > 0 ? { resolved } : {}),
        ...(changed ? { flags: ['input_changed' as const] } : {}),
      });
      // Observers hear of it after it is recorded; their delivery is best effort.
      if (harness !== null) await harness.notify(event).catch(() => undefined);
      return { recorded, unknownFields: ready.unknownFields };
    },

    reject,
    note: append,
    get head() {
      return durable;
    },
    get failed() {
      return failure !== null;
    },
    get lastRecord() {
      return chain.lastRecord;
    },
    get size() {
      return chain.size;
    },
    get recordVersion() {
      return chain.recordVersion;
    },
    async close() {
      closed = true;
      await harness?.close();
    },
  };
}
