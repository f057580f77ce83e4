/**
 * A fresh PostgreSQL database per test file, dropped after. The server is TALLY_TEST_POSTGRES
 * (`.ci/run` sets it to a database it made for the run), else the local one on 127.0.0.1:5432.
 * Without a reachable server the PostgreSQL tests are skipped with the reason, except under CI,
 * where they fail.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.TALLY_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

let reachable: Promise<string | null> | undefined;

/** null when PostgreSQL answers, else why not. */
export function postgresUnavailable(): Promise<string | null> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return null;
    } catch (error) {
      return `PostgreSQL is not reachable at ${ADMIN_URL} (${(error as Error).message}); set TALLY_TEST_POSTGRES`;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/** The `skip` option for a PostgreSQL test: false when it can run; under CI never skipped. */
export async function skipWithoutPostgres(): Promise<string | false> {
  const why = await postgresUnavailable();
  if (why === null || process.env.CI) return false;
  return why;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(prefix = 'tally_test'): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
