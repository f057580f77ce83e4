/**
 * Execution payloads: turns, model attempts and switches, and context compaction. Each is one
 * hand-written definition; the envelope stays open and the `turn` identity is closed.
 */
import { isJsonObject } from '../../core/json.js';
import { message, textParts } from './content.js';
import {
  attempt,
  attemptUsage,
  type EnvelopeOptions,
  error,
  execution,
  identity,
  model,
  skippedOnlyAsSuppliedResult,
  tokenCounts,
  turnUsage,
} from './event-parts.js';
import {
  anyObject,
  arr,
  bool,
  int,
  issue,
  nonEmpty,
  num,
  type ObjectRules,
  obj,
  oneOfValues,
  type Props,
  str,
} from './shape.js';

type Rule = NonNullable<ObjectRules['also']>;

/** One event type: envelope flavour, payload members, required and forbidden members, cross-field rules. */
export interface EventDefinition {
  envelope: EnvelopeOptions;
  props: Props;
  required: string[];
  forbidden?: string[];
  also?: Rule;
}

export const EXEC_MESSAGES: EnvelopeOptions = { closedTurn: true, items: 'messages' };
export const EXEC_PARTS: EnvelopeOptions = { closedTurn: true, items: 'parts' };

const TURN_OUTCOMES = ['completed', 'failed', 'cancelled', 'max_iterations'] as const;

export const EXECUTION_DEFINITIONS: Record<string, EventDefinition> = {
  'turn.start': {
    envelope: EXEC_MESSAGES,
    props: { trigger: oneOfValues(['user', 'continuation', 'hook', 'external']), expandedFrom: nonEmpty },
    required: ['turn', 'trigger', 'items'],
  },
  'turn.finish.before': {
    envelope: EXEC_MESSAGES,
    props: {
      outcome: oneOfValues(TURN_OUTCOMES),
      lastAssistantItem: identity(true),
      continuationCount: int(0),
      usage: turnUsage,
    },
    required: ['turn', 'outcome', 'continuationCount', 'items'],
  },
  'turn.end': {
    envelope: EXEC_MESSAGES,
    props: {
      outcome: oneOfValues(TURN_OUTCOMES),
      lastAssistantItem: identity(true),
      continuationCount: int(0),
      usage: turnUsage,
      error,
    },
    required: ['turn', 'outcome', 'continuationCount', 'items'],
    also: (event, pointer, out) => {
      if (event.outcome === 'completed' && 'error' in event)
        issue(out, `${pointer}/error`, 'forbidden', 'a completed turn has no error');
    },
  },
  'turn.progress': {
    envelope: EXEC_PARTS,
    props: { item: identity(true), delta: message, final: bool },
    required: ['turn', 'item', 'delta', 'final'],
  },
  'model.request.before': {
    envelope: EXEC_MESSAGES,
    props: { model, attempt, params: anyObject },
    required: ['model', 'attempt', 'params', 'items'],
    forbidden: ['usage', 'execution', 'finishReason', 'latencyMs', 'error'],
  },
  'model.response.after': {
    envelope: EXEC_MESSAGES,
    props: { model, attempt, execution, usage: attemptUsage, finishReason: nonEmpty, latencyMs: num(0) },
    required: ['model', 'attempt', 'execution', 'items', 'finishReason'],
    forbidden: ['error'],
    also: (event, pointer, out) => {
      if (isJsonObject(event.execution) && event.execution.status === 'skipped') {
        for (const name of ['usage', 'latencyMs']) {
          if (name in event)
            issue(out, `${pointer}/${name}`, 'forbidden', `a supplied response must not report ${name}`);
        }
      }
      skippedOnlyAsSuppliedResult(event, pointer, out);
    },
  },
  'model.error': {
    envelope: EXEC_PARTS,
    props: { model, attempt, execution, error, usage: attemptUsage, latencyMs: num(0), recovery: nonEmpty },
    required: ['model', 'attempt', 'execution', 'error'],
    forbidden: ['finishReason'],
    also: (event, pointer, out) => {
      if (isJsonObject(event.execution) && event.execution.status !== 'executed') {
        issue(
          out,
          `${pointer}/execution/status`,
          'const',
          'a model error follows an executed attempt: status must be "executed"',
        );
      }
    },
  },
  'model.switch.before': {
    envelope: EXEC_PARTS,
    props: {
      current: model,
      proposed: model,
      reason: nonEmpty,
      pricing: obj(
        {
          currency: str({ pattern: /^[A-Z]{3}$/, patternName: 'a three-letter upper-case currency code' }),
          inputPerMillionTokens: num(0),
          outputPerMillionTokens: num(0),
        },
        { required: ['currency'], closed: true },
      ),
    },
    required: ['current', 'proposed', 'reason'],
    forbidden: ['previous'],
  },
  'model.switch.after': {
    envelope: EXEC_PARTS,
    props: { previous: model, current: model, reason: nonEmpty },
    required: ['previous', 'current', 'reason'],
    forbidden: ['proposed'],
  },
  'context.compact.before': {
    envelope: EXEC_MESSAGES,
    props: {
      trigger: oneOfValues(['auto', 'manual', 'hook']),
      instructions: textParts,
      tokenCounts: (value, pointer, out) => {
        tokenCounts(value, pointer, out);
        if (isJsonObject(value) && 'after' in value)
          issue(out, `${pointer}/after`, 'forbidden', 'before compaction there is no after count');
      },
    },
    required: ['trigger', 'items'],
    forbidden: ['summary', 'removed', 'execution'],
  },
  'context.compact.after': {
    envelope: EXEC_MESSAGES,
    props: {
      summary: textParts,
      removed: arr(obj({ id: nonEmpty }, { required: ['id'], closed: true })),
      tokenCounts,
      execution,
    },
    required: ['summary', 'removed', 'execution'],
    also: skippedOnlyAsSuppliedResult,
  },
};
