/**
 * Effect composition for one boundary: a pure pipeline that stages one backend's accepted effects
 * atomically on top of the effects accepted before it, and derives the settled outcome.
 *
 * Rules (AHP composition; the interop scenario semantics):
 * - Modifications apply in response order to the full effective event before a `return` binds.
 * - A changed effective event (deep, key order ignored) drops the incoming candidate and turns an
 *   earlier `allow` back into `none`; incoming `ask` and `deny` are sticky.
 * - deny > ask > allow > none; a deny discards any candidate.
 * - Flow: stop beats continue; continue instructions accumulate; the boundary consumes at most one
 *   continuation, and a continue with no remaining allowance rejects the whole response.
 * - Messages and injections accumulate in order, only from accepted responses.
 * Staging never mutates its input pipeline, so a rejected response leaves nothing behind.
 */

import { canonicalize } from '../../core/canonical.js';
import type { CanonicalEvent } from '../../core/event.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import {
  applyEdit,
  holdsWithheldContent,
  readPath,
  targetLocation,
  writePath,
} from '../protocol/edit-targets.js';

export type Permission = 'none' | 'allow' | 'ask' | 'deny';
export type FlowState = 'none' | 'stop' | 'continue';
export type Decision = 'allow' | 'deny' | 'ask';

export interface Candidate {
  value: unknown;
  provenance?: Record<string, unknown>;
}

/** Incoming pipeline state (`params.state` of an intercept request). */
export interface InterceptState {
  permission: Permission;
  candidate: Candidate | null;
  flow?: FlowState;
  instructions?: string[];
  injections?: unknown[];
}

/** The capabilities advertised in one intercept request (`params.capabilities`). */
export interface InterceptCapabilities {
  effects: string[];
  modify?: Record<string, { replace: boolean; merge: boolean }>;
  flow?: {
    operations: string[];
    remainingContinuations?: number;
    continuationCount?: number;
    maxContinuations?: number;
  };
  inject?: { context: { append: true; deliverAt: string[] } };
  elicitation?: { form?: JsonObject; url?: JsonObject };
}

/** Who supplied an accepted effect: the backend id and the local subscription label. */
export interface Supplier {
  backend: string;
  subscription: string;
}

export interface Denial extends Supplier {
  /** The deny reason (a generic text for a synthetic fail-closed denial). */
  reason: string;
  /** True for a fail-closed synthetic denial, never for a backend's explicit deny. */
  synthetic: boolean;
}

/** The running state of one boundary's composition. */
export interface Pipeline {
  /** The effective event: the original with every accepted modification applied. */
  event: CanonicalEvent;
  permission: Permission;
  candidate: Candidate | null;
  flow: FlowState;
  messages: string[];
  instructions: string[];
  injections: JsonObject[];
  denial?: Denial;
}

/** A host rule over a staged event (e.g. a tool's own argument checks); returns why it fails. */
export type HostCheck = (event: CanonicalEvent, target: string) => string | undefined;

export interface StageContext {
  capabilities: InterceptCapabilities;
  /** The event exactly as this subscription saw it (after content selection). */
  view: JsonObject;
  supplier: Supplier;
  hostCheck?: HostCheck;
}

/** Boundaries with no original operation to execute: the outcome's `executed` is always false. */
const NO_OPERATION = new Set(['turn.finish.before']);

/** A fresh pipeline for `event` with the caller's incoming state (omitted: permission none, no candidate). */
export function startPipeline(event: CanonicalEvent, state?: InterceptState): Pipeline {
  return {
    // Never mutated: staging copies the event before its first modification.
    event,
    permission: state?.permission ?? 'none',
    candidate: state?.candidate ? structuredClone(state.candidate) : null,
    flow: state?.flow ?? 'none',
    messages: [],
    instructions: [...(state?.instructions ?? [])],
    injections: (state?.injections ?? []).filter(isJsonObject).map((i) => structuredClone(i)),
  };
}

function strengthen(current: Permission, next: Permission): Permission {
  const rank: Record<Permission, number> = { none: 0, allow: 1, ask: 2, deny: 3 };
  return rank[next] > rank[current] ? next : current;
}

/** Checks one effect against the advertised capabilities; returns why it is not allowed. */
function unadvertised(effect: JsonObject, caps: InterceptCapabilities): string | undefined {
  const type = String(effect.type);
  if (!caps.effects.includes(type)) return `effect '${type}' was not advertised`;
  if (type === 'modify') {
    const target = caps.modify?.[String(effect.target)];
    const op = effect.operation;
    if (!target || (op !== 'replace' && op !== 'merge') || target[op] !== true) {
      return `modify ${String(effect.target)}/${String(op)} was not advertised`;
    }
  }
  if (type === 'flow' && !caps.flow?.operations.includes(String(effect.operation))) {
    return `flow operation '${String(effect.operation)}' was not advertised`;
  }
  if (type === 'inject') {
    const inject = caps.inject?.context;
    if (inject?.append !== true || !inject.deliverAt.includes(String(effect.deliverAt))) {
      return `inject at '${String(effect.deliverAt)}' was not advertised`;
    }
  }
  return undefined;
}

/** Where effect `i` sits in the JSON-RPC response: `/result/effects/i`. */
function effectPointer(i: number): string {
  return `/result/effects/${i}`;
}

/** A staging failure: `pointer` is the full JSON pointer into the response; `error` starts with it. */
function refuse(i: number, why: string): { error: string; pointer: string } {
  const pointer = effectPointer(i);
  return { error: `${pointer}: ${why}`, pointer };
}

/**
 * Stages one response's effects on `pipeline`. Returns the next pipeline, or an error naming the
 * first effect that cannot apply by its full response pointer (`/result/effects/i`); in that case
 * nothing of the response is kept.
 */
export function stageResponse(
  pipeline: Pipeline,
  effects: readonly unknown[],
  ctx: StageContext,
): { pipeline: Pipeline } | { error: string; pointer: string } {
  const list: JsonObject[] = [];
  for (const [i, effect] of effects.entries()) {
    if (!isJsonObject(effect) || typeof effect.type !== 'string') return refuse(i, 'not an effect');
    const why = unadvertised(effect, ctx.capabilities);
    if (why) return refuse(i, why);
    list.push(effect);
  }

  // 1. Modifications, in order, on a private copy of the effective event (made only if needed).
  let staged = pipeline.event;
  let modified = false;
  for (const [i, effect] of list.entries()) {
    if (effect.type !== 'modify') continue;
    if (!modified) {
      staged = structuredClone(pipeline.event);
      modified = true;
    }
    const target = String(effect.target);
    const location = targetLocation(staged.type, target);
    if (!location) return refuse(i, `'${staged.type}' has no modify target '${target}'`);
    const operation = effect.operation === 'replace' ? 'replace' : 'merge';
    const current = readPath(staged, location.path);
    if (location.shape === 'list' && operation === 'replace') {
      const seen = readPath(ctx.view, location.path);
      if (holdsWithheldContent(current) || JSON.stringify(seen) !== JSON.stringify(current)) {
        return refuse(i, `a whole-list replace of '${target}' cannot apply over withheld content`);
      }
    }
    const next = applyEdit(location.shape, current, operation, effect.value);
    if (typeof next === 'string') return refuse(i, next);
    writePath(staged, location.path, next.value);
    const hostError = ctx.hostCheck?.(staged, target);
    if (hostError !== undefined) return refuse(i, hostError);
  }

  // 2. Flow: a continue needs a remaining allowance, even when a stop wins.
  const stops = list.some((e) => e.type === 'flow' && e.operation === 'stop');
  const continues = list.filter((e) => e.type === 'flow' && e.operation === 'continue');
  if (continues.length > 0) {
    const remaining = ctx.capabilities.flow?.remainingContinuations;
    if (typeof remaining !== 'number' || remaining <= 0) {
      // Every effect passed the first loop, so `list` is `effects` and the index is the response's.
      return refuse(
        list.indexOf(continues[0]!),
        'a continue was requested with no remaining continuation allowance',
      );
    }
  }

  // 3. Commit to a new pipeline.
  const next: Pipeline = {
    event: staged,
    permission: pipeline.permission,
    candidate: pipeline.candidate,
    flow: pipeline.flow,
    messages: [...pipeline.messages],
    instructions: [...pipeline.instructions],
    injections: [...pipeline.injections],
    ...(pipeline.denial ? { denial: pipeline.denial } : {}),
  };
  if (modified && canonicalize(staged) !== canonicalize(pipeline.event)) {
    next.candidate = null;
    if (next.permission === 'allow') next.permission = 'none';
  }
  const returns = list.filter((e) => e.type === 'return');
  const lastReturn = returns[returns.length - 1];
  if (lastReturn) {
    next.candidate = {
      value: structuredClone(lastReturn.value),
      provenance: { backend: ctx.supplier.backend, subscription: ctx.supplier.subscription },
    };
  }
  for (const effect of list) {
    if (effect.type === 'allow') next.permission = strengthen(next.permission, 'allow');
    if (effect.type === 'ask') next.permission = strengthen(next.permission, 'ask');
    if (effect.type === 'deny') {
      next.permission = 'deny';
      if (!next.denial) next.denial = { ...ctx.supplier, reason: String(effect.reason), synthetic: false };
    }
    if (effect.type === 'message') next.messages.push(String(effect.text));
    if (effect.type === 'inject') next.injections.push(structuredClone(effect));
    if (effect.type === 'flow' && effect.operation === 'continue' && typeof effect.instruction === 'string') {
      next.instructions.push(effect.instruction);
    }
  }
  if (next.permission === 'deny') next.candidate = null;
  if (stops) next.flow = 'stop';
  else if (continues.length > 0 && next.flow !== 'stop') next.flow = 'continue';
  return { pipeline: next };
}

/** Applies a fail-closed synthetic denial (an operational failure, not a backend's deny). */
export function failClosed(pipeline: Pipeline, supplier: Supplier, reason: string): Pipeline {
  return {
    ...pipeline,
    permission: 'deny',
    candidate: null,
    denial: pipeline.denial ?? { ...supplier, reason, synthetic: true },
  };
}

/** True once the pipeline must not call further interceptors: an accepted deny or stop. */
export function isShortCircuited(pipeline: Pipeline): boolean {
  return pipeline.permission === 'deny' || pipeline.flow === 'stop';
}

/** The application result, with exactly the keys of the interop `expected` objects. */
export interface Settlement {
  decision: Decision;
  executed: boolean;
  input?: unknown;
  messages: string[];
  result?: unknown;
  flow?: 'stop' | 'continue';
  continuationInstructions?: string[];
  continuationRemaining?: number;
  injections?: JsonObject[];
}

/**
 * Derives the settled result. `none` resolves to allow: AHP did not object and the host's own
 * permission system decides (an empty effect list is never an authorization grant).
 */
export function settle(pipeline: Pipeline, capabilities: InterceptCapabilities | undefined): Settlement {
  const decision: Decision =
    pipeline.permission === 'deny' ? 'deny' : pipeline.permission === 'ask' ? 'ask' : 'allow';
  const stopped = pipeline.flow === 'stop';
  const hasOperation = !NO_OPERATION.has(pipeline.event.type);
  const out: Settlement = {
    decision,
    executed: hasOperation && decision === 'allow' && !stopped && pipeline.candidate === null,
    messages: [...pipeline.messages],
  };
  const tool = pipeline.event.tool;
  // The effective event's own input (the outcome carries that event too): read-only, not a copy.
  if (isJsonObject(tool) && Object.hasOwn(tool, 'input')) out.input = tool.input;
  if (hasOperation && decision === 'allow' && !stopped && pipeline.candidate !== null) {
    out.result = structuredClone(pipeline.candidate.value);
  }
  if (pipeline.flow !== 'none') out.flow = pipeline.flow;
  const flowCaps = capabilities?.flow;
  if (flowCaps?.operations.includes('continue')) {
    out.continuationInstructions = [...pipeline.instructions];
    const remaining = flowCaps.remainingContinuations ?? 0;
    out.continuationRemaining = pipeline.flow === 'continue' ? remaining - 1 : remaining;
  }
  if (capabilities?.effects.includes('inject') || pipeline.injections.length > 0) {
    out.injections = pipeline.injections.map((i) => structuredClone(i));
  }
  return out;
}
