/**
 * The little SQL surface both stores are written against: statements with `?` placeholders
 * (rewritten to `$n` for PostgreSQL), rows as plain objects, and transactions. A transaction on
 * PostgreSQL is one pooled connection; on SQLite, where one connection serves the process, every
 * statement waits for an open transaction to end, so no statement lands inside another's.
 */

export type SqlValue = string | number | Buffer | null;
export type Row = Record<string, unknown>;

export interface Sql {
  all(text: string, params?: readonly SqlValue[]): Promise<Row[]>;
  /** Runs a statement; returns the number of rows it changed. */
  run(text: string, params?: readonly SqlValue[]): Promise<number>;
}

export interface SqlDriver extends Sql {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (sql: Sql) => Promise<T>, options?: { migrationLock?: boolean }): Promise<T>;
  close(): Promise<void>;
}

export function toNumber(value: unknown): number {
  return typeof value === 'string' ? Number(value) : (value as number);
}

export function toNullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : toNumber(value);
}

export function toBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value);
  return Buffer.alloc(0);
}

/** A one-at-a-time queue: the SQLite driver's whole concurrency control within a process. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
