/** Rows as the drivers return them → the store's row types (PostgreSQL returns BIGINT as text). */
import type { LogEntry, LogEntryKind } from '../../hub-client/wire.js';
import type {
  AgentRow,
  CertificateRow,
  HeadRow,
  ListQuery,
  PackageRow,
  ShipRow,
  StoredEntry,
  TimeCursor,
} from './hub-store.js';
import { type Row, type SqlValue, toBuffer, toNullableNumber, toNumber } from './sql.js';

const s = (v: unknown) => v as string;

export function shipRow(r: Row): ShipRow {
  return {
    ship_id: s(r.ship_id),
    key_id: s(r.key_id),
    public_key: s(r.public_key),
    registered_at: toNumber(r.registered_at),
  };
}

export function certificateRow(r: Row): CertificateRow {
  return {
    serial: s(r.serial),
    ship_id: s(r.ship_id),
    agent: s(r.agent),
    digest: s(r.digest),
    envelope: s(r.envelope),
    issued_at: toNumber(r.issued_at),
    valid_from: toNumber(r.valid_from),
    valid_until: toNumber(r.valid_until),
    received_at: toNumber(r.received_at),
    log_index: toNumber(r.log_index),
  };
}

export const PACKAGE_COLUMNS =
  'session, ship_id, agent, certificate, digest, size, record_count, merkle_root, started_at, ended_at, received_at, log_index, checks';

export function packageRow(r: Row): PackageRow {
  return {
    session: s(r.session),
    ship_id: s(r.ship_id),
    agent: (r.agent as string | null) ?? null,
    certificate: (r.certificate as string | null) ?? null,
    digest: s(r.digest),
    size: toNumber(r.size),
    record_count: toNumber(r.record_count),
    merkle_root: s(r.merkle_root),
    started_at: toNullableNumber(r.started_at),
    ended_at: toNullableNumber(r.ended_at),
    received_at: toNumber(r.received_at),
    log_index: toNumber(r.log_index),
    checks: s(r.checks),
  };
}

export function headRow(r: Row): HeadRow {
  return {
    session: s(r.session),
    seq: toNumber(r.seq),
    record_digest: s(r.record_digest),
    digest: s(r.digest),
    ship_id: s(r.ship_id),
    time: toNumber(r.time),
    envelope: s(r.envelope),
    received_at: toNumber(r.received_at),
    log_index: toNumber(r.log_index),
  };
}

export function agentRow(r: Row): AgentRow {
  return { slug: s(r.slug), ship_id: s(r.ship_id), first_seen: toNumber(r.first_seen) };
}

export function entryRow(r: Row): StoredEntry {
  const entry: LogEntry = {
    kind: s(r.kind) as LogEntryKind,
    ship_id: s(r.ship_id),
    id: s(r.id),
    digest: s(r.digest),
  };
  return { index: toNumber(r.idx), entry, bytes: toBuffer(r.entry) };
}

/**
 * WHERE, ORDER BY and LIMIT for a list newest first by `order` (a log index, or a time), then by
 * `id` where `order` is not unique, with the filters each table has. A log index cursor is the
 * last index seen; a TimeCursor resumes after the last (time, id) seen.
 */
export function listClause(
  query: ListQuery<number | TimeCursor>,
  columns: { order: string; id?: string; agent?: string; ship?: string; time?: string },
): { where: string; params: SqlValue[]; limit: number } {
  const conditions: string[] = [`${columns.order} IS NOT NULL`];
  const params: SqlValue[] = [];
  if (query.agent !== undefined && columns.agent) {
    conditions.push(`${columns.agent} = ?`);
    params.push(query.agent);
  }
  if (query.ship !== undefined && columns.ship) {
    conditions.push(`${columns.ship} = ?`);
    params.push(query.ship);
  }
  if (query.since !== undefined && columns.time) {
    conditions.push(`${columns.time} >= ?`);
    params.push(query.since);
  }
  if (query.until !== undefined && columns.time) {
    conditions.push(`${columns.time} < ?`);
    params.push(query.until);
  }
  const before = query.before;
  if (typeof before === 'number') {
    conditions.push(`${columns.order} < ?`);
    params.push(before);
  } else if (before !== undefined) {
    if (!columns.id) throw new Error(`a list ordered by ${columns.order} alone takes a log index cursor`);
    conditions.push(`(${columns.order}, ${columns.id}) < (?, ?)`);
    params.push(before.time, before.id);
  }
  const order = columns.id ? `${columns.order} DESC, ${columns.id} DESC` : `${columns.order} DESC`;
  return {
    where: `WHERE ${conditions.join(' AND ')} ORDER BY ${order}`,
    params,
    limit: Math.max(1, Math.min(500, Math.floor(query.limit))),
  };
}
