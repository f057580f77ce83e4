/**
 * What `tally run` wired for a session, bound into its signed `session.start` record
 * (`extensions["dev.tally.wiring"]`): the harness whose hooks were wired and the event source its
 * events carry, the harness session id and transcript the run chose (Claude Code), what in the
 * agent's settings the run overrode, and the other hooks it ran beside. The verifier's
 * `harness_reported` reads it: a session whose wired harness sent nothing does not pass as captured.
 */
import { adapterOf } from '../capture/adapters.js';
import { isJsonObject } from '../core/json.js';
import { SessionError } from './store.js';

export const WIRING_EXTENSION = 'dev.tally.wiring';

export interface WiredSwitch {
  path: string;
  key: string;
  hook?: string;
}

export interface SessionWiring {
  harness: string;
  /** The event source URI of the harness's events (`urn:tally:<harness>`). */
  event_source: string;
  harness_session?: string;
  transcript?: string;
  neutralised?: WiredSwitch[];
  other_hooks?: WiredSwitch[];
}

function bad(field: string, message: string): never {
  throw new SessionError('bad-event', `wiring.${field}: ${message}`, { field: `wiring.${field}` });
}

function switches(value: unknown, field: string): WiredSwitch[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > 100)
    bad(field, 'must be a list of at most 100 {path, key, hook?}');
  return value.map((item, i) => {
    if (
      !isJsonObject(item) ||
      typeof item.path !== 'string' ||
      typeof item.key !== 'string' ||
      (item.hook !== undefined && typeof item.hook !== 'string')
    )
      bad(`${field}[${i}]`, 'must be {path, key, hook?} of strings');
    return { path: item.path, key: item.key, ...(item.hook !== undefined ? { hook: item.hook } : {}) };
  });
}

/** The wiring a client claims, checked field by field; the event source is the adapter's, not the client's. */
export function parseWiring(value: unknown): SessionWiring {
  if (!isJsonObject(value)) bad('', 'must be an object {harness, harness_session?, transcript?, …}');
  const { harness } = value;
  if (typeof harness !== 'string' || adapterOf(harness) === undefined)
    bad('harness', 'is not a harness Tally captures');
  for (const field of ['harness_session', 'transcript'] as const)
    if (value[field] !== undefined && (typeof value[field] !== 'string' || value[field] === ''))
      bad(field, 'must be a non-empty string');
  const neutralised = switches(value.neutralised, 'neutralised');
  const others = switches(value.other_hooks, 'other_hooks');
  return {
    harness,
    event_source: `urn:tally:${harness}`,
    ...(typeof value.harness_session === 'string' ? { harness_session: value.harness_session } : {}),
    ...(typeof value.transcript === 'string' ? { transcript: value.transcript } : {}),
    ...(neutralised && neutralised.length > 0 ? { neutralised } : {}),
    ...(others && others.length > 0 ? { other_hooks: others } : {}),
  };
}
