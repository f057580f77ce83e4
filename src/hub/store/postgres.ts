/**
 * The PostgreSQL driver (node-postgres pool). Transactions run on one pooled connection at READ
 * COMMITTED; the log's head row is taken FOR UPDATE by every append, which orders appends across
 * all replicas. Migrations hold a transaction-scoped advisory lock so replicas that start together
 * apply them once.
 */
import pg from 'pg';
import { HubStoreError } from './hub-store.js';
import type { Row, Sql, SqlDriver, SqlValue } from './sql.js';

/** The advisory lock key migrations hold ("tally" in ASCII). */
const MIGRATION_LOCK = 0x74616c6c79;

function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

function bind(client: pg.Pool | pg.PoolClient): Sql {
  return {
    async all(text, params = []) {
      const result = await client.query(numbered(text), params as SqlValue[]);
      return result.rows as Row[];
    },
    async run(text, params = []) {
      const result = await client.query(numbered(text), params as SqlValue[]);
      return result.rowCount ?? 0;
    },
  };
}

export async function openPostgres(url: string, options: { max?: number } = {}): Promise<SqlDriver> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  pool.on('error', () => {
    // An idle connection dropped by the server; the pool replaces it on next use.
  });
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new HubStoreError(
      'unavailable',
      `cannot reach PostgreSQL at ${redact(url)}: ${(error as Error).message}`,
    );
  }
  const direct = bind(pool);
  return {
    dialect: 'postgres',
    all: direct.all,
    run: direct.run,
    async transaction(fn, txOptions = {}) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        if (txOptions.migrationLock) await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        const result = await fn(bind(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** A connection string without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the given database URL';
  }
}
