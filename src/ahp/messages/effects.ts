/**
 * Effect objects of a `hooks/intercept` result. Every effect is closed; an unknown effect type or
 * operation is unsupported semantics and rejects the whole response.
 */
import { isJsonObject } from '../../core/json.js';
import { CORE_EFFECT_TYPES, MODIFY_TARGETS } from '../protocol/catalogue.js';
import { messages, textParts } from './content.js';
import { extensions } from './event-parts.js';
import {
  anyObject,
  anyValue,
  type Check,
  constant,
  issue,
  nonEmpty,
  obj,
  oneOfValues,
  REVERSE_DNS,
  str,
} from './shape.js';

/** Targets whose value is a canonical message list. */
export const MESSAGE_LIST_TARGETS = ['prompt', 'request', 'response', 'output'] as const;
/** Targets whose value is a text-part list. */
export const TEXT_PART_TARGETS = ['instructions', 'summary'] as const;
/** Targets whose value is an object. */
export const OBJECT_TARGETS = ['input', 'workspace'] as const;

const deny = obj(
  {
    type: anyValue,
    reason: nonEmpty,
    code: str({ pattern: REVERSE_DNS, patternName: 'a reverse-DNS code such as com.example.policy.rule' }),
    extensions,
  },
  { required: ['type', 'reason'], closed: true },
);

/** `content` takes a message list or an object; which one is decided by the boundary (contextual rules). */
const contentValue: Check = (value, pointer, out) => {
  if (Array.isArray(value)) messages(value, pointer, out);
  else if (!isJsonObject(value))
    issue(out, pointer, 'type', 'a content value must be a message list or an object');
};

export function modifyValueCheck(target: unknown): Check {
  if ((MESSAGE_LIST_TARGETS as readonly unknown[]).includes(target)) return messages;
  if ((TEXT_PART_TARGETS as readonly unknown[]).includes(target)) return textParts;
  if ((OBJECT_TARGETS as readonly unknown[]).includes(target)) return anyObject;
  if (target === 'content') return contentValue;
  return anyValue;
}

const modify: Check = (value, pointer, out) => {
  if (!isJsonObject(value)) return;
  obj(
    {
      type: anyValue,
      target: oneOfValues(MODIFY_TARGETS),
      operation: oneOfValues(['replace', 'merge']),
      value: modifyValueCheck(value.target),
    },
    { required: ['type', 'target', 'operation', 'value'], closed: true },
  )(value, pointer, out);
};

const flow: Check = (value, pointer, out) => {
  if (!isJsonObject(value)) return;
  if (value.operation === 'stop') {
    return obj(
      { type: anyValue, operation: anyValue, reason: nonEmpty },
      { required: ['type', 'operation', 'reason'], closed: true },
    )(value, pointer, out);
  }
  if (value.operation === 'continue') {
    return obj(
      { type: anyValue, operation: anyValue, instruction: nonEmpty },
      { required: ['type', 'operation'], closed: true },
    )(value, pointer, out);
  }
  if (!('operation' in value))
    return issue(
      out,
      `${pointer}/operation`,
      'required',
      "a flow effect requires 'operation' (stop or continue)",
    );
  issue(
    out,
    `${pointer}/operation`,
    'effect.unknown-operation',
    `unknown flow operation ${JSON.stringify(value.operation)}: must be "stop" or "continue"`,
  );
};

const EFFECTS: Record<string, Check> = {
  deny,
  allow: obj({ type: anyValue }, { closed: true }),
  ask: obj({ type: anyValue }, { closed: true }),
  modify,
  message: obj({ type: anyValue, text: str() }, { required: ['type', 'text'], closed: true }),
  return: obj({ type: anyValue, value: anyValue }, { required: ['type', 'value'], closed: true }),
  flow,
  inject: obj(
    {
      type: anyValue,
      target: constant('context'),
      operation: constant('append'),
      deliverAt: oneOfValues(['now', 'next_turn']),
      value: messages,
    },
    { required: ['type', 'target', 'operation', 'deliverAt', 'value'], closed: true },
  ),
};

/** One effect object. Extension (reverse-DNS) effect types are not part of the wire union and are rejected. */
export const effectCheck: Check = (value, pointer, out) => {
  if (!isJsonObject(value)) return issue(out, pointer, 'type', 'an effect must be an object');
  const type = value.type;
  const check = typeof type === 'string' && Object.hasOwn(EFFECTS, type) ? EFFECTS[type] : undefined;
  if (!check) {
    if (!('type' in value)) return issue(out, `${pointer}/type`, 'required', "an effect requires 'type'");
    return issue(
      out,
      `${pointer}/type`,
      'effect.unknown-type',
      `unknown effect type ${JSON.stringify(type)} (expected one of ${CORE_EFFECT_TYPES.join(', ')}): the whole response is rejected`,
    );
  }
  check(value, pointer, out);
};
