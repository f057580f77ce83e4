/**
 * The SQLite driver: one better-sqlite3 connection (WAL, foreign keys, a busy timeout so several
 * processes on one file wait rather than fail), loaded only when a hub opens a SQLite store, so
 * installing Tally never needs the native module. better-sqlite3 is synchronous; statements and
 * transactions are queued through one mutex so an open transaction never sees another request's
 * statements.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { HubStoreError } from './hub-store.js';
import { Mutex, type Row, type Sql, type SqlDriver, type SqlValue } from './sql.js';

interface Statement {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
  reader: boolean;
}

interface Database {
  prepare(text: string): Statement;
  pragma(text: string): unknown;
  exec(text: string): void;
  close(): void;
}

type DatabaseConstructor = new (file: string, options?: { timeout?: number }) => Database;

export const SQLITE_INSTALL_HINT = 'npm install better-sqlite3@12';

function loadBinding(): DatabaseConstructor {
  const require = createRequire(import.meta.url);
  try {
    return require('better-sqlite3') as DatabaseConstructor;
  } catch (error) {
    throw new HubStoreError(
      'unavailable',
      `the SQLite store needs the optional package better-sqlite3 (${(error as Error).message.split('\n')[0]}); ` +
        `install it with '${SQLITE_INSTALL_HINT}', or use --db postgres://…`,
    );
  }
}

export function openSqlite(file: string): SqlDriver {
  const Binding = loadBinding();
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Binding(file, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const statements = new Map<string, Statement>();
  const prepared = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = db.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  const direct: Sql = {
    async all(text, params = []) {
      return prepared(text).all(...(params as SqlValue[])) as Row[];
    },
    async run(text, params = []) {
      const statement = prepared(text);
      if (statement.reader) return statement.all(...(params as SqlValue[])).length;
      return statement.run(...(params as SqlValue[])).changes;
    },
  };
  const mutex = new Mutex();
  return {
    dialect: 'sqlite',
    all: (text, params) => mutex.run(() => direct.all(text, params)),
    run: (text, params) => mutex.run(() => direct.run(text, params)),
    transaction: (fn) =>
      mutex.run(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(direct);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          db.exec('ROLLBACK');
          throw error;
        }
      }),
    close: async () => {
      await mutex.run(() => db.close());
    },
  };
}
