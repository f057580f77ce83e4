/**
 * The harness capability manifest: the `manifest` of a `hooks/capabilities` result and of
 * `session.start`. Which events the harness emits in which modes, the effects per interceptable
 * event, uncovered paths, transports, limits and managed-policy scope.
 */
import { isJsonObject } from '../../core/json.js';
import { catalogueEntry, EVENT_CATALOGUE } from '../protocol/catalogue.js';
import { capabilitiesFor } from './capability-rules.js';
import { gapList } from './event-parts.js';
import { arr, bool, type Check, int, issue, nonEmpty, obj, oneOfValues } from './shape.js';

const EVENT_TYPES = EVENT_CATALOGUE.map((e) => e.type);

const manifestEvent: Check = (value, pointer, out) => {
  obj(
    {
      event: oneOfValues(EVENT_TYPES),
      modes: arr(oneOfValues(['observe', 'intercept']), { min: 1, unique: true }),
    },
    { required: ['event', 'modes'] },
  )(value, pointer, out);
  if (!isJsonObject(value)) return;
  const modes = Array.isArray(value.modes) ? value.modes : [];
  const intercepts = modes.includes('intercept');
  const entry = typeof value.event === 'string' ? catalogueEntry(value.event) : undefined;
  if ('capabilities' in value)
    capabilitiesFor(value.event)(value.capabilities, `${pointer}/capabilities`, out);
  if (intercepts && !('capabilities' in value)) {
    issue(
      out,
      `${pointer}/capabilities`,
      'required',
      'an entry with intercept mode must state its capabilities',
    );
  }
  if (
    !intercepts &&
    isJsonObject(value.capabilities) &&
    Array.isArray(value.capabilities.effects) &&
    value.capabilities.effects.length > 0
  ) {
    issue(
      out,
      `${pointer}/capabilities/effects`,
      'manifest.observe-effects',
      'an observe-only entry must not claim effects',
    );
  }
  if (intercepts && entry && !entry.interceptable) {
    issue(
      out,
      `${pointer}/modes/${modes.indexOf('intercept')}`,
      'manifest.not-interceptable',
      `${entry.type} is observe-only and cannot be intercepted`,
    );
  }
};

const limitValue = int(0);

export const manifest: Check = obj(
  {
    events: arr(manifestEvent),
    gaps: gapList,
    transports: arr(oneOfValues(['http', 'stdio', 'in_process']), { unique: true }),
    authentication: arr(oneOfValues(['bearer', 'oauth']), { unique: true }),
    limits: obj({
      maxUploadBytes: limitValue,
      maxContinuations: limitValue,
      minTimeoutMs: limitValue,
      maxTimeoutMs: limitValue,
    }),
    toolPaths: arr(nonEmpty, { unique: true }),
    contentCategories: arr(nonEmpty, { unique: true }),
    managedPolicy: obj(
      { scopes: arr(oneOfValues(['user', 'project', 'managed']), { unique: true }), disableable: bool },
      {
        required: ['scopes', 'disableable'],
        also: (value, pointer, out) => {
          if (
            Array.isArray(value.scopes) &&
            value.scopes.includes('managed') &&
            'disableable' in value &&
            value.disableable !== false
          ) {
            issue(
              out,
              `${pointer}/disableable`,
              'manifest.managed-disableable',
              'managed scope requires disableable false',
            );
          }
        },
      },
    ),
    correlationIdentityFields: arr(nonEmpty, { unique: true }),
  },
  {
    required: [
      'events',
      'gaps',
      'transports',
      'authentication',
      'toolPaths',
      'contentCategories',
      'limits',
      'managedPolicy',
      'correlationIdentityFields',
    ],
    forbidden: ['identity'],
  },
);
