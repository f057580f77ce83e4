/**
 * The hub's schema, as numbered migrations per dialect. A migration runs once, inside a
 * transaction that also records it; on PostgreSQL the run holds an advisory lock so replicas
 * starting together do not race. Times are epoch milliseconds; binary values are BLOB / BYTEA.
 */
import { HubStoreError } from './hub-store.js';
import { type Sql, toNumber } from './sql.js';

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
    // Packages are verified before they are stored; compress them cheaply (lz4) rather than with
    // PostgreSQL's default pglz, whose cost lands inside the write transaction.
    ...(d === 'postgres' ? ['ALTER TABLE packages ALTER COLUMN bytes SET COMPRESSION lz4'] : []),
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

/** Applies every migration not yet recorded, inside the caller's (locked) transaction. */
export async function migrate(sql: Sql, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite')
    await sql.run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
  else
    await sql.run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
    );
  const done = new Set(
    (await sql.all('SELECT version FROM schema_migrations')).map((r) => toNumber(r.version)),
  );
  for (const migration of migrations(dialect)) {
    if (done.has(migration.version)) continue;
    try {
      for (const statement of migration.statements) await sql.run(statement);
    } catch (error) {
      throw new HubStoreError(
        'migration',
        `migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`,
      );
    }
    await sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      migration.version,
      migration.name,
      Date.now(),
    ]);
  }
}
