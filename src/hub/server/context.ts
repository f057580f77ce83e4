/** What every handler is given: the hub's parts, and the request being answered. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRfc3339DateTime } from '../../core/time.js';
import type { HubIdentity } from '../identity.js';
import type { HubStore, ListQuery, TimeCursor } from '../store/hub-store.js';
import { HubHttpError } from './errors.js';
import type { HubLimits } from './limits.js';

export interface Hub {
  store: HubStore;
  identity: HubIdentity;
  limits: HubLimits;
  /** The URL clients reach this hub at (behind a load balancer); null: taken from Host. */
  publicUrl: URL | null;
  now(): Date;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
  ip: string;
}

export type Handler = (hub: Hub, x: Exchange) => Promise<void>;

function time(value: string | null, name: string): number | undefined {
  if (value === null) return undefined;
  const ms = isRfc3339DateTime(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw new HubHttpError('bad-request', `${name} must be an RFC 3339 date-time`);
  return ms;
}

/** How a list writes its `before` cursor in a URL, and reads it back (null: malformed). */
export interface CursorFormat<C> {
  /** What a cursor looks like, for the 400 that refuses another. */
  shape: string;
  parse(text: string): C | null;
  format(cursor: C): string;
}

/** Certificates and packages: the log index of the last item (unique). */
export const logIndexCursor: CursorFormat<number> = {
  shape: 'a non-negative integer',
  parse: (text) => (/^\d+$/.test(text) ? Number(text) : null),
  format: String,
};

/** Agents and ships: `<ms>~<id>`, the last item's time (epoch ms) and id, which breaks ties. */
export const timeCursor: CursorFormat<TimeCursor> = {
  shape: '<epoch ms>~<id>',
  parse(text) {
    const match = /^(\d+)~(.+)$/s.exec(text);
    const time = Number(match?.[1]);
    return match && Number.isSafeInteger(time) ? { time, id: match[2]! } : null;
  },
  format: (cursor) => `${cursor.time}~${cursor.id}`,
};

/** ?agent=&ship=&since=&until=&limit=&before= */
export function listQuery<C>(query: URLSearchParams, cursor: CursorFormat<C>): ListQuery<C> {
  const limitText = query.get('limit') ?? '50';
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new HubHttpError('bad-request', 'limit must be an integer from 1 to 500');
  const out: ListQuery<C> = { limit };
  const before = query.get('before');
  if (before !== null) {
    const parsed = cursor.parse(before);
    if (parsed === null) throw new HubHttpError('bad-request', `before must be ${cursor.shape}`);
    out.before = parsed;
  }
  const agent = query.get('agent');
  if (agent !== null) out.agent = agent;
  const ship = query.get('ship');
  if (ship !== null) out.ship = ship;
  const since = time(query.get('since'), 'since');
  if (since !== undefined) out.since = since;
  const until = time(query.get('until'), 'until');
  if (until !== undefined) out.until = until;
  return out;
}

/** The `next` link of a page: the same query with `before` moved on. */
export function nextLink<C>(
  path: string,
  query: URLSearchParams,
  next: C | null,
  cursor: CursorFormat<C>,
): string | null {
  if (next === null) return null;
  const q = new URLSearchParams(query);
  q.set('before', cursor.format(next));
  return `${path}?${q.toString()}`;
}

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
