/**
 * The AHP `draft` event catalogue: the 32 event types, which of them may be intercepted, and, for
 * the interceptable ones, which effects a harness may advertise at that boundary (the per-event
 * bounds of the protocol's capability rules). Pure data; no I/O.
 */

/** The effect types the protocol defines. Anything else must be a reverse-DNS extension effect. */
export const CORE_EFFECT_TYPES = [
  'deny',
  'allow',
  'ask',
  'modify',
  'message',
  'return',
  'flow',
  'inject',
] as const;
export type CoreEffectType = (typeof CORE_EFFECT_TYPES)[number];

/** Targets of the `modify` effect. */
export const MODIFY_TARGETS = [
  'input',
  'output',
  'prompt',
  'request',
  'response',
  'content',
  'instructions',
  'summary',
  'workspace',
] as const;
export type ModifyTarget = (typeof MODIFY_TARGETS)[number];

export type FlowOperation = 'stop' | 'continue';

export interface CatalogueEntry {
  /** Event type, e.g. `tool.before`. */
  type: string;
  /** First dotted segment; the registration wildcard `family.*` selects a whole family. */
  family: string;
  /** True for the 19 events that may be delivered through `hooks/intercept`. */
  interceptable: boolean;
  /** Effects a harness may advertise at this boundary (empty when observe-only). */
  effects: readonly CoreEffectType[];
  /** `modify` targets allowed at this boundary (empty when `modify` is not allowed). */
  modifyTargets: readonly ModifyTarget[];
  /** `flow` operations allowed at this boundary (empty when `flow` is not allowed). */
  flowOperations: readonly FlowOperation[];
  /** Payload fields the event requires beyond the common envelope (id, source, type, time). */
  required: readonly string[];
}

type Bounds = Pick<CatalogueEntry, 'effects' | 'modifyTargets' | 'flowOperations'>;

const OBSERVE_ONLY: Bounds = { effects: [], modifyTargets: [], flowOperations: [] };

function bounds(
  effects: CoreEffectType[],
  modifyTargets: ModifyTarget[] = [],
  flowOperations: FlowOperation[] = [],
): Bounds {
  return { effects, modifyTargets, flowOperations };
}

function entry(type: string, b: Bounds | null, required: string[]): CatalogueEntry {
  const family = type.slice(0, type.indexOf('.'));
  const allowed = b ?? OBSERVE_ONLY;
  return Object.freeze({
    type,
    family,
    interceptable: b !== null,
    ...allowed,
    required: Object.freeze(required),
  });
}

/** Every event of the draft catalogue, in the order of the protocol's event table. */
export const EVENT_CATALOGUE: readonly CatalogueEntry[] = Object.freeze([
  entry('session.start', bounds(['inject', 'message']), [
    'session',
    'trigger',
    'harness',
    'permissionMode',
    'manifest',
    'items',
  ]),
  entry('session.end', null, ['session', 'outcome', 'reason']),
  entry(
    'tool.before',
    bounds(['deny', 'allow', 'ask', 'modify', 'inject', 'flow', 'return', 'message'], ['input'], ['stop']),
    ['call', 'tool', 'path'],
  ),
  entry('tool.after', bounds(['modify', 'inject', 'flow', 'message'], ['output'], ['stop', 'continue']), [
    'outcome',
    'execution',
    'call',
    'tool',
    'path',
    'items',
  ]),
  entry(
    'tool.permission.request',
    bounds(['allow', 'deny', 'modify', 'flow', 'message'], ['input'], ['stop']),
    ['call', 'tool', 'path', 'suggestions', 'sandboxBypass'],
  ),
  entry('tool.permission.resolved', null, ['call', 'tool', 'path', 'decision', 'decidedBy']),
  entry('tool.progress', null, ['call', 'tool', 'path', 'partialOutput', 'backgrounded']),
  entry('tool.batch.after', bounds(['flow', 'inject', 'message'], [], ['stop']), ['batch', 'calls']),
  entry('turn.start', bounds(['deny', 'modify', 'inject', 'flow', 'message'], ['prompt'], ['stop']), [
    'turn',
    'trigger',
    'items',
  ]),
  entry('turn.finish.before', bounds(['modify', 'flow', 'message'], ['response'], ['stop', 'continue']), [
    'turn',
    'outcome',
    'continuationCount',
    'items',
  ]),
  entry('turn.end', null, ['turn', 'outcome', 'continuationCount', 'items']),
  entry('turn.progress', null, ['turn', 'item', 'delta', 'final']),
  entry(
    'model.request.before',
    bounds(['deny', 'modify', 'inject', 'return', 'flow', 'message'], ['request'], ['stop']),
    ['model', 'attempt', 'params', 'items'],
  ),
  entry('model.response.after', bounds(['modify', 'flow', 'message'], ['response'], ['stop']), [
    'model',
    'attempt',
    'execution',
    'items',
    'finishReason',
  ]),
  entry('model.error', null, ['model', 'attempt', 'execution', 'error']),
  entry('model.switch.before', bounds(['deny', 'flow', 'message'], [], ['stop']), [
    'current',
    'proposed',
    'reason',
  ]),
  entry('model.switch.after', null, ['previous', 'current', 'reason']),
  entry(
    'context.compact.before',
    bounds(['deny', 'modify', 'return', 'inject', 'message'], ['instructions']),
    ['trigger', 'items'],
  ),
  entry('context.compact.after', bounds(['inject', 'modify', 'message'], ['summary']), [
    'summary',
    'removed',
    'execution',
  ]),
  entry('config.change.before', bounds(['deny', 'message']), ['change']),
  entry('config.change.after', null, ['change']),
  entry('user.attention', null, ['attention']),
  entry('user.elicitation.request', bounds(['deny', 'return', 'message']), ['elicitation']),
  entry('user.elicitation.result', bounds(['modify', 'message'], ['content']), [
    'elicitation',
    'parentEventId',
  ]),
  entry('user.message.inbound', bounds(['deny', 'modify', 'message'], ['prompt']), ['message']),
  entry('user.message.outbound', bounds(['deny', 'modify', 'message'], ['content']), ['message']),
  entry('task.change.before', bounds(['deny', 'message']), ['task']),
  entry('task.change.after', null, ['task']),
  entry('workspace.change.before', bounds(['deny', 'modify', 'message'], ['workspace']), ['workspace']),
  entry('workspace.change.after', null, ['workspace']),
  entry('file.changed', null, ['changes']),
  entry('hook.failure', null, ['failure', 'parentEventId']),
]);

const BY_TYPE: ReadonlyMap<string, CatalogueEntry> = new Map(EVENT_CATALOGUE.map((e) => [e.type, e]));

/** The catalogue entry of an event type, or undefined for an unknown (unsupported) type. */
export function catalogueEntry(type: string): CatalogueEntry | undefined {
  return BY_TYPE.get(type);
}

/** Every family name, in first-appearance order: session, tool, turn, model, context, config, user, task, workspace, file, hook. */
export const EVENT_FAMILIES: readonly string[] = Object.freeze([
  ...new Set(EVENT_CATALOGUE.map((e) => e.family)),
]);

/** The interceptable event types, in catalogue order. */
export const INTERCEPTABLE_EVENTS: readonly string[] = Object.freeze(
  EVENT_CATALOGUE.filter((e) => e.interceptable).map((e) => e.type),
);

/** Event names the protocol removed; they must not be used. */
export const REMOVED_EVENT_NAMES: readonly string[] = Object.freeze([
  'tool.error',
  'prompt.submitted',
  'agent.stop',
  'notification',
  'permission.request',
  'compact.pre',
  'compact.post',
  'file.edited',
  'other',
]);
