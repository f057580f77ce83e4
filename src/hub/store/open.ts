/** Opens the store a `--db` value names: a postgres:// URL, or a SQLite file path. */
import type { HubStore } from './hub-store.js';
import { openPostgres } from './postgres.js';
import { SqlStore } from './sql-store.js';
import { openSqlite } from './sqlite.js';

export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//.test(db);
}

export async function openHubStore(db: string): Promise<HubStore> {
  return new SqlStore(isPostgresUrl(db) ? await openPostgres(db) : openSqlite(db));
}
