/**
 * The per-request `capabilities` object of `hooks/intercept` (also used in manifest entries): the
 * advertised effect list, its option blocks (present exactly when their effect is advertised), and
 * the per-event bounds from the catalogue (which effects, modify targets and flow operations a
 * boundary can support at all).
 */
import { isJsonObject } from '../../core/json.js';
import { CORE_EFFECT_TYPES, catalogueEntry, MODIFY_TARGETS } from '../protocol/catalogue.js';
import type { Issue } from '../registration/types.js';
import {
  anyObject,
  arr,
  bool,
  type Check,
  constant,
  int,
  issue,
  obj,
  oneOfValues,
  type Props,
  REVERSE_DNS,
} from './shape.js';

const effectName: Check = (value, pointer, out) => {
  if (
    typeof value === 'string' &&
    ((CORE_EFFECT_TYPES as readonly string[]).includes(value) || REVERSE_DNS.test(value))
  )
    return;
  issue(
    out,
    pointer,
    'capabilities.effect',
    `must be a core effect type or a reverse-DNS extension effect, got ${JSON.stringify(value)}`,
  );
};

const modifyOperations: Check = obj(
  { replace: bool, merge: bool },
  {
    required: ['replace', 'merge'],
    also: (value, pointer, out) => {
      if (value.replace !== true && value.merge !== true) {
        issue(out, pointer, 'capabilities.modify-empty', 'at least one of replace and merge must be true');
      }
    },
  },
);

const modifyTargetProps: Props = Object.fromEntries(MODIFY_TARGETS.map((t) => [t, modifyOperations]));

const flowOptions: Check = obj(
  {
    operations: arr(oneOfValues(['stop', 'continue']), { min: 1, unique: true }),
    remainingContinuations: int(0),
    continuationCount: int(0),
    maxContinuations: int(0),
  },
  {
    required: ['operations'],
    also: (value, pointer, out) => {
      if (!Array.isArray(value.operations) || !value.operations.includes('continue')) return;
      for (const counter of ['remainingContinuations', 'continuationCount']) {
        if (!(counter in value))
          issue(
            out,
            `${pointer}/${counter}`,
            'required',
            `'${counter}' is required when continue is advertised`,
          );
      }
    },
  },
);

const injectOptions: Check = obj(
  {
    context: obj(
      { append: constant(true), deliverAt: arr(oneOfValues(['now', 'next_turn']), { min: 1, unique: true }) },
      { required: ['append', 'deliverAt'] },
    ),
  },
  { required: ['context'] },
);

const OPTION_BLOCKS = ['modify', 'flow', 'inject'] as const;

function pairing(value: Record<string, unknown>, pointer: string, out: Issue[]): void {
  const effects = Array.isArray(value.effects) ? value.effects : [];
  for (const block of OPTION_BLOCKS) {
    const advertised = effects.includes(block);
    if (advertised && !(block in value))
      issue(
        out,
        `${pointer}/${block}`,
        'required',
        `'${block}' options are required when '${block}' is advertised`,
      );
    if (!advertised && block in value) {
      issue(
        out,
        `${pointer}/${block}`,
        'capabilities.unpaired-options',
        `'${block}' options are present but '${block}' is not advertised in effects`,
      );
    }
  }
}

/** The capabilities object shape, without per-event bounds. */
export const capabilitiesShape: Check = obj(
  {
    effects: arr(effectName, { unique: true }),
    modify: obj(modifyTargetProps, { minProperties: 1 }),
    flow: flowOptions,
    inject: injectOptions,
    elicitation: obj({ form: anyObject, url: anyObject }),
  },
  { required: ['effects'], also: pairing },
);

/** Per-event bounds: effects, modify targets and flow operations this boundary can support. */
export function checkCapabilityBounds(
  eventType: string,
  value: unknown,
  pointer: string,
  out: Issue[],
): void {
  const entry = catalogueEntry(eventType);
  if (!entry?.interceptable || !isJsonObject(value)) return;
  if (Array.isArray(value.effects)) {
    value.effects.forEach((effect, index) => {
      if (!(entry.effects as readonly unknown[]).includes(effect)) {
        issue(
          out,
          `${pointer}/effects/${index}`,
          'capabilities.effect-out-of-bounds',
          `${JSON.stringify(effect)} cannot be advertised at ${eventType} (allowed: ${entry.effects.join(', ')})`,
        );
      }
    });
  }
  if (isJsonObject(value.modify)) {
    for (const target of Object.keys(value.modify)) {
      if (!(entry.modifyTargets as readonly string[]).includes(target)) {
        issue(
          out,
          `${pointer}/modify/${target}`,
          'capabilities.modify-target-out-of-bounds',
          `modify(${target}) cannot be advertised at ${eventType}`,
        );
      }
    }
  }
  if (isJsonObject(value.flow) && Array.isArray(value.flow.operations)) {
    value.flow.operations.forEach((operation, index) => {
      if (!(entry.flowOperations as readonly unknown[]).includes(operation)) {
        issue(
          out,
          `${pointer}/flow/operations/${index}`,
          'capabilities.flow-out-of-bounds',
          `flow ${JSON.stringify(operation)} cannot be advertised at ${eventType}`,
        );
      }
    });
  }
}

/** Capabilities for one event type: shape plus that event's bounds. */
export function capabilitiesFor(eventType: unknown): Check {
  return (value, pointer, out) => {
    capabilitiesShape(value, pointer, out);
    if (typeof eventType === 'string') checkCapabilityBounds(eventType, value, pointer, out);
  };
}
