/**
 * The hub's schema, as numbered migrations per dialect. A migration runs once, inside a
 * transaction that also records it; on PostgreSQL the run holds an advisory lock so replicas
 * starting together do not race. Times are epoch milliseconds; binary values are BLOB / BYTEA.
 */

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

type Dialect = 'sqlite' | 'postgres';

function schema(d: Dialect): string[] {
  const bytes = d === 'sqlite' ? 'BLOB' : 'BYTEA';
  const big = d === 'sqlite' ? 'INTEGER' : 'BIGINT';
  return [
    `CREATE TABLE hub_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    `CREATE TABLE ships (ship_id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key TEXT NOT NULL,
       registered_at ${big} NOT NULL)`,
    // Who owns an id: a session id belongs to the ship that first witnessed or uploaded it.
    `CREATE TABLE claims (id TEXT PRIMARY KEY, ship_id TEXT NOT NULL, claimed_at ${big} NOT NULL)`,
    `CREATE TABLE agents (slug TEXT PRIMARY KEY, ship_id TEXT NOT NULL, first_seen ${big} NOT NULL)`,
    `CREATE TABLE certificates (serial TEXT PRIMARY KEY, ship_id TEXT NOT NULL, agent TEXT NOT NULL,
       digest TEXT NOT NULL, envelope TEXT NOT NULL, issued_at ${big} NOT NULL, valid_from ${big} NOT NULL,
       valid_until ${big} NOT NULL, received_at ${big} NOT NULL, log_index ${big})`,
    `CREATE INDEX certificates_agent ON certificates (agent, log_index)`,
    `CREATE INDEX certificates_ship ON certificates (ship_id, log_index)`,
    `CREATE TABLE packages (session TEXT PRIMARY KEY, ship_id TEXT NOT NULL, agent TEXT, certificate TEXT,
       digest TEXT NOT NULL, size ${big} NOT NULL, record_count ${big} NOT NULL, merkle_root TEXT NOT NULL,
       started_at ${big}, ended_at ${big}, received_at ${big} NOT NULL, log_index ${big}, checks TEXT NOT NULL,
       bytes ${bytes} NOT NULL)`,
    `CREATE INDEX packages_log ON packages (log_index)`,
    `CREATE INDEX packages_agent ON packages (agent, log_index)`,
    `CREATE INDEX packages_ship ON packages (ship_id, log_index)`,
    `CREATE TABLE heads (session TEXT NOT NULL, seq ${big} NOT NULL, record_digest TEXT NOT NULL,
       digest TEXT NOT NULL, ship_id TEXT NOT NULL, time ${big} NOT NULL, envelope TEXT NOT NULL,
       received_at ${big} NOT NULL, log_index ${big}, PRIMARY KEY (session, seq))`,
    `CREATE TABLE nonces (key_id TEXT NOT NULL, nonce TEXT NOT NULL, expires_at ${big} NOT NULL,
       PRIMARY KEY (key_id, nonce))`,
    `CREATE INDEX nonces_expiry ON nonces (expires_at)`,
    `CREATE TABLE rate_counters (bucket TEXT NOT NULL, window_start ${big} NOT NULL, hits ${big} NOT NULL,
       PRIMARY KEY (bucket, window_start))`,
    // The log: one head row (the sequencer every replica locks), the entries, the tiles.
    `CREATE TABLE tlog_head (id INTEGER PRIMARY KEY CHECK (id = 1), size ${big} NOT NULL, root ${bytes} NOT NULL,
       checkpoint TEXT NOT NULL)`,
    `CREATE TABLE tlog_entries (idx ${big} PRIMARY KEY, kind TEXT NOT NULL, ship_id TEXT NOT NULL, id TEXT NOT NULL,
       digest TEXT NOT NULL, entry ${bytes} NOT NULL)`,
    `CREATE INDEX tlog_entries_id ON tlog_entries (id, kind)`,
    `CREATE TABLE tlog_tiles (level INTEGER NOT NULL, idx ${big} NOT NULL, hashes ${bytes} NOT NULL,
       PRIMARY KEY (level, idx))`,
  ];
}

export function migrations(dialect: Dialect): Migration[] {
  return [{ version: 1, name: 'hub schema', statements: schema(dialect) }];
}
