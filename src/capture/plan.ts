/**
 * One native hook per native event, computed from the portable registration the recorder
 * dispatches (Tally's certificate judge included). Shared by every native adapter: order lives in
 * the recorder (agents run matching hooks in parallel), so there is exactly one Tally hook per
 * event. Its timeout is the event's whole intercept deadline (the subscriptions run one after
 * another) plus a margin; it fails closed exactly when an intercept subscription at that event is
 * fail-closed — Tally's own certificate judge always is, at tool.before.
 */
import { matchingSubscriptions } from '../ahp/harness/matching.js';
import { effectiveTimeout } from '../ahp/protocol/capabilities.js';
import type { Registration } from '../ahp/registration/types.js';
import type { JsonObject } from '../core/json.js';

/** What a native event is to Tally: the AHP event it becomes and whether it names a tool. */
export interface NativeEventSpec {
  ahp: string;
  /** The native hook takes a matcher (the tool name): Tally's is `""`, every tool. */
  tool?: boolean;
}

export interface NativeHookPlan<E extends string = string> {
  event: E;
  ahpEvent: string;
  timeoutS: number;
  failClosed: boolean;
  tool: boolean;
  /** Who asks for it: the backends whose subscriptions cover the event (the recorder always). */
  backends: string[];
}

/** Seconds added to an event's deadline for the recorder's own work (record, fdatasync). */
const MARGIN_S = 5;
/** The deadline of an event no interceptor subscribes to: recording only. */
const RECORD_ONLY_S = 10;

export function planNativeHooks<E extends string>(
  registration: Registration,
  events: Readonly<Record<E, NativeEventSpec>>,
): NativeHookPlan<E>[] {
  return (Object.keys(events) as E[]).map((event) => {
    const spec = events[event];
    const intercepts = matchingSubscriptions(registration, spec.ahp, 'intercept');
    const observers = matchingSubscriptions(registration, spec.ahp, 'observe');
    const deadlineMs = intercepts.reduce(
      (sum, m) => sum + effectiveTimeout(m.subscription.timeoutMs ?? 1000),
      0,
    );
    return {
      event,
      ahpEvent: spec.ahp,
      timeoutS: intercepts.length === 0 ? RECORD_ONLY_S : Math.ceil(deadlineMs / 1000) + MARGIN_S,
      failClosed: intercepts.some((m) => (m.subscription.failurePolicy ?? 'fail-closed') === 'fail-closed'),
      tool: spec.tool === true,
      backends: [...new Set([...intercepts, ...observers].map((m) => m.backend.id))],
    };
  });
}

/**
 * The command an agent runs for Tally's shim: the POSIX sh shim `<sh> <channel> --fail …` when the
 * installer found sh and curl (`sh`: bin/tally-hook and the node it falls back to), else the Node
 * shim `<tally> hook <channel> --fail … [--agent NAME]`.
 */
export function shimCommand(
  tally: string,
  channel: string,
  failClosed: boolean,
  agent?: string,
  sh?: string,
): string {
  const flags = `--fail ${failClosed ? 'closed' : 'open'}${agent ? ` --agent ${agent}` : ''}`;
  return sh ? `${sh} ${channel} ${flags}` : `${tally} hook ${channel} ${flags}`;
}

/** True for a command Tally's installer wrote for `channel` (whatever the path to tally or the flags). */
export function isShimCommand(command: unknown, channel: string): boolean {
  if (typeof command !== 'string') return false;
  return (
    new RegExp(`(^|[\\s/'"])tally(\\.js)?['"]?\\s+hook\\s+${channel}(\\s|$)`).test(command) ||
    new RegExp(`(^|[\\s/'"])tally-hook['"]?(\\s+--node\\s+('[^']*'|\\S+))?\\s+${channel}(\\s|$)`).test(
      command,
    )
  );
}

/** The recorder's hook URL for `channel` (the marker by which Tally's http hooks are told apart). */
export function recorderHookUrl(channel: string, port: number, agent?: string): string {
  return `http://127.0.0.1:${port}/hooks/${channel}${agent ? `?agent=${encodeURIComponent(agent)}` : ''}`;
}

/** True for a URL recorderHookUrl made for `channel`, whatever the port or agent. */
export function isRecorderHookUrl(url: unknown, channel: string): boolean {
  return (
    typeof url === 'string' && new RegExp(`^http://127\\.0\\.0\\.1:\\d+/hooks/${channel}(\\?|$)`).test(url)
  );
}

/**
 * An http hook (Claude Code's format) posting to the recorder, authenticated from the agent's
 * environment: `tally run` (or `eval "$(tally recorder env)"`) puts the secret and the session there.
 */
export function recorderHttpHook(
  channel: string,
  port: number,
  timeoutS: number,
  agent?: string,
): JsonObject {
  return {
    type: 'http',
    url: recorderHookUrl(channel, port, agent),
    headers: { Authorization: 'Bearer $TALLY_RECORDER_SECRET', 'X-Tally-Session': '$TALLY_SESSION' },
    allowedEnvVars: ['TALLY_RECORDER_SECRET', 'TALLY_SESSION'],
    timeout: timeoutS,
  };
}

export interface ShimHookOptions {
  /** How tally is invoked from the agent's shell (e.g. `tally` or `node /…/bin/tally.js`). */
  tally: string;
  /** The POSIX sh shim command (`'/…/bin/tally-hook' --node '/…/node'`), when sh and curl are here. */
  sh?: string;
  channel: string;
  /** The agent whose certificate sessions opened for this harness run under. */
  agent?: string;
  /** The agent's unit for `timeout`. */
  timeoutUnit: 's' | 'ms';
}

/** A Claude-Code-shaped hooks block of command hooks, one per planned event, each the shim. */
export function shimHooksBlock(
  plans: readonly NativeHookPlan[],
  options: ShimHookOptions,
): Record<string, JsonObject[]> {
  const out: Record<string, JsonObject[]> = {};
  for (const plan of plans) {
    const hook: JsonObject = {
      type: 'command',
      command: shimCommand(options.tally, options.channel, plan.failClosed, options.agent, options.sh),
      timeout: options.timeoutUnit === 'ms' ? plan.timeoutS * 1000 : plan.timeoutS,
    };
    out[plan.event] = [{ ...(plan.tool ? { matcher: '' } : {}), hooks: [hook] }];
  }
  return out;
}
