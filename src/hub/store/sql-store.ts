/**
 * HubStore over either SQL driver. Each publish is one transaction: claim the id (and the agent
 * slug), insert the row write-once, then append to the log under the head lock and record the
 * index. Row locks are taken before the head lock in every transaction, so concurrent replicas
 * cannot deadlock; the head lock alone orders the log.
 */
import type { LogEntry } from '../../hub-client/wire.js';
import { appendEntries, type CheckpointSigner } from '../log/append.js';
import { TreeReader } from '../log/tree.js';
import {
  type AgentRow,
  type CertificateRow,
  type HeadRow,
  type HubStore,
  HubStoreError,
  type ListQuery,
  type LogHead,
  type PackageRow,
  type Page,
  type Published,
  type ShipRow,
  type StoredEntry,
  type TimeCursor,
  type Unlogged,
} from './hub-store.js';
import { logTx } from './log-tx.js';
import { migrate } from './migrations.js';
import {
  agentRow,
  certificateRow,
  entryRow,
  headRow,
  listClause,
  PACKAGE_COLUMNS,
  packageRow,
  shipRow,
} from './rows.js';
import { type Row, type Sql, type SqlDriver, type SqlValue, toBuffer, toNumber } from './sql.js';

/** An id to claim for a ship: a session id (`claims`) or an agent slug (`agents`). */
interface Claim {
  table: 'claims' | 'agents';
  id: string;
  ship: string;
  now: number;
  subject: string;
}

/** The write-once insert of a publish, and how to find the row again. */
interface RowWrite {
  insert: string;
  values: SqlValue[];
  where: string;
  key: SqlValue[];
  table: string;
  subject: string;
}

/** A publish refused inside its transaction: thrown so the transaction rolls back, then answered. */
class Refused extends Error {
  constructor(readonly published: Published) {
    super(`refused: ${published.subject}`);
  }
}

export class SqlStore implements HubStore {
  readonly dialect: 'sqlite' | 'postgres';
  private signCheckpoint: CheckpointSigner | null = null;
  /** Registered ships never change (a ship id is its key's fingerprint), so every replica may cache them. */
  private readonly shipCache = new Map<string, ShipRow>();

  constructor(private readonly db: SqlDriver) {
    this.dialect = db.dialect;
  }

  async open(hub: { origin: string; publicKey: string }, signCheckpoint: CheckpointSigner): Promise<void> {
    this.signCheckpoint = signCheckpoint;
    await this.db.transaction(
      async (sql) => {
        await migrate(sql, this.dialect);
        for (const [name, value] of [
          ['origin', hub.origin],
          ['public_key', hub.publicKey],
        ] as const) {
          await sql.run('INSERT INTO hub_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [
            name,
            value,
          ]);
          const stored = (await sql.all('SELECT value FROM hub_meta WHERE name = ?', [name]))[0]?.value;
          if (stored !== value)
            throw new HubStoreError(
              'wrong-hub',
              `this database belongs to a hub with ${name} ${String(stored)}, not ${value}: every replica must use the same key and origin`,
            );
        }
        const head = await sql.all('SELECT size FROM tlog_head WHERE id = 1');
        if (head.length === 0) {
          const empty = new TreeReader(async () => Buffer.alloc(0), 0);
          const root = await empty.root();
          await sql.run(
            'INSERT INTO tlog_head (id, size, root, checkpoint) VALUES (1, 0, ?, ?) ON CONFLICT (id) DO NOTHING',
            [root, signCheckpoint(0, root)],
          );
        }
      },
      { migrationLock: true },
    );
  }

  close(): Promise<void> {
    return this.db.close();
  }

  private signer(): CheckpointSigner {
    if (!this.signCheckpoint) throw new HubStoreError('log', 'the store was not opened');
    return this.signCheckpoint;
  }

  private async append(sql: Sql, entry: LogEntry): Promise<number> {
    const appended = await appendEntries(logTx(sql, this.dialect), [entry], this.signer());
    return appended.indexes[0]!;
  }

  /** Claims `id` for `ship` in one statement; returns the owner when another ship already holds it. */
  private async claim(
    sql: Sql,
    table: 'claims' | 'agents',
    id: string,
    ship: string,
    now: number,
  ): Promise<string | null> {
    const [key, time] = table === 'claims' ? ['id', 'claimed_at'] : ['slug', 'first_seen'];
    // A no-op update on conflict makes RETURNING give the row that holds the id, new or old.
    const rows = await sql.all(
      `INSERT INTO ${table} (${key}, ship_id, ${time}) VALUES (?, ?, ?) ON CONFLICT (${key}) DO UPDATE SET ${key} = excluded.${key} RETURNING ship_id`,
      [id, ship, now],
    );
    const owner = rows[0]?.ship_id as string;
    return owner === ship ? null : owner;
  }

  async registerShip(ship: ShipRow): Promise<'created' | 'exists'> {
    const changed = await this.db.run(
      'INSERT INTO ships (ship_id, key_id, public_key, registered_at) VALUES (?, ?, ?, ?) ON CONFLICT (ship_id) DO NOTHING',
      [ship.ship_id, ship.key_id, ship.public_key, ship.registered_at],
    );
    return changed === 1 ? 'created' : 'exists';
  }

  async ship(shipId: string): Promise<ShipRow | null> {
    const cached = this.shipCache.get(shipId);
    if (cached) return cached;
    const rows = await this.db.all('SELECT * FROM ships WHERE ship_id = ?', [shipId]);
    if (!rows[0]) return null;
    const row = shipRow(rows[0]);
    if (this.shipCache.size < 100_000) this.shipCache.set(shipId, row);
    return row;
  }

  async ships(query: ListQuery<TimeCursor>): Promise<Page<ShipRow, TimeCursor>> {
    return this.page(
      query,
      { order: 'registered_at', id: this.bytewise('ship_id') },
      'SELECT * FROM ships',
      shipRow,
      (r) => ({ time: r.registered_at, id: r.ship_id }),
    );
  }

  async useNonce(keyId: string, nonce: string, expiresAt: number): Promise<boolean> {
    const now = Date.now();
    if (Math.random() < 0.01) await this.db.run('DELETE FROM nonces WHERE expires_at < ?', [now]);
    const changed = await this.db.run(
      'INSERT INTO nonces (key_id, nonce, expires_at) VALUES (?, ?, ?) ON CONFLICT (key_id, nonce) DO NOTHING',
      [keyId, nonce, expiresAt],
    );
    return changed === 1;
  }

  async hit(buckets: readonly string[], window: number): Promise<number[]> {
    if (Math.random() < 0.001)
      await this.db.run('DELETE FROM rate_counters WHERE window_start < ?', [window - 3_600_000]);
    const rows = await this.db.all(
      `INSERT INTO rate_counters (bucket, window_start, hits) VALUES ${buckets.map(() => '(?, ?, 1)').join(', ')} ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_counters.hits + 1 RETURNING bucket, hits`,
      buckets.flatMap((b) => [b, window]),
    );
    const counts = new Map(rows.map((r) => [r.bucket as string, toNumber(r.hits)]));
    return buckets.map((b) => counts.get(b) ?? 0);
  }

  publishCertificate(row: Unlogged<CertificateRow>): Promise<Published> {
    return this.publish(
      [{ table: 'agents', id: row.agent, ship: row.ship_id, now: row.received_at, subject: 'agent' }],
      {
        insert:
          'INSERT INTO certificates (serial, ship_id, agent, digest, envelope, issued_at, valid_from, valid_until, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        values: [
          row.serial,
          row.ship_id,
          row.agent,
          row.digest,
          row.envelope,
          row.issued_at,
          row.valid_from,
          row.valid_until,
          row.received_at,
        ],
        where: 'serial = ?',
        key: [row.serial],
        table: 'certificates',
        subject: 'serial',
      },
      { kind: 'certificate', ship_id: row.ship_id, id: row.serial, digest: row.digest },
    );
  }

  publishPackage(row: Unlogged<PackageRow>, bytes: Buffer): Promise<Published> {
    const values: SqlValue[] = [
      row.session,
      row.ship_id,
      row.agent,
      row.certificate,
      row.digest,
      row.size,
      row.record_count,
      row.merkle_root,
      row.started_at,
      row.ended_at,
      row.received_at,
      row.checks,
      bytes,
    ];
    // A package indexed under an agent (its certificate named by serial or fetched by URL) claims
    // the slug as a certificate does, and may not name another ship's certificate serial.
    const claims: Claim[] = [
      { table: 'claims', id: row.session, ship: row.ship_id, now: row.received_at, subject: 'session' },
    ];
    if (row.agent !== null)
      claims.push({
        table: 'agents',
        id: row.agent,
        ship: row.ship_id,
        now: row.received_at,
        subject: 'agent',
      });
    const serial = row.certificate;
    const guard =
      serial === null
        ? undefined
        : async (sql: Sql): Promise<Published | null> => {
            const [held] = await sql.all('SELECT ship_id FROM certificates WHERE serial = ?', [serial]);
            const owner = held?.ship_id as string | undefined;
            return owner !== undefined && owner !== row.ship_id
              ? { status: 'forbidden', owner, subject: 'certificate' }
              : null;
          };
    return this.publish(
      claims,
      {
        insert: `INSERT INTO packages (${PACKAGE_COLUMNS.replace(', log_index', '')}, bytes) VALUES (${values.map(() => '?').join(', ')})`,
        values,
        where: 'session = ?',
        key: [row.session],
        table: 'packages',
        subject: 'session',
      },
      { kind: 'package', ship_id: row.ship_id, id: row.session, digest: row.digest },
      guard,
    );
  }

  witnessHead(row: Unlogged<HeadRow>): Promise<Published> {
    return this.publish(
      [{ table: 'claims', id: row.session, ship: row.ship_id, now: row.received_at, subject: 'session' }],
      {
        insert:
          'INSERT INTO heads (session, seq, record_digest, digest, ship_id, time, envelope, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        values: [
          row.session,
          row.seq,
          row.record_digest,
          row.digest,
          row.ship_id,
          row.time,
          row.envelope,
          row.received_at,
        ],
        where: 'session = ? AND seq = ?',
        key: [row.session, row.seq],
        table: 'heads',
        subject: 'seq',
      },
      { kind: 'head', ship_id: row.ship_id, id: row.session, digest: row.digest },
    );
  }

  /**
   * One publish transaction: claim the ids (session, agent slug) for the ship, insert the row
   * write-once, append the entry under the head lock, record the index on the row. A refusal rolls
   * the whole transaction back, claims made before it included.
   */
  private async publish(
    claims: readonly Claim[],
    row: RowWrite,
    entry: LogEntry,
    guard?: (sql: Sql) => Promise<Published | null>,
  ): Promise<Published> {
    try {
      return await this.db.transaction(async (sql) => {
        for (const claim of claims) {
          const owner = await this.claim(sql, claim.table, claim.id, claim.ship, claim.now);
          if (owner) throw new Refused({ status: 'forbidden', owner, subject: claim.subject });
        }
        const refused = await guard?.(sql);
        if (refused) throw new Refused(refused);
        const changed = await sql.run(`${row.insert} ON CONFLICT DO NOTHING`, row.values);
        if (changed !== 1) {
          const existing = (
            await sql.all(`SELECT digest, log_index FROM ${row.table} WHERE ${row.where}`, row.key)
          )[0];
          return this.same(existing ?? {}, entry.digest, row.subject);
        }
        const index = await this.append(sql, entry);
        await sql.run(`UPDATE ${row.table} SET log_index = ? WHERE ${row.where}`, [index, ...row.key]);
        return { status: 'created', log_index: index };
      });
    } catch (error) {
      if (error instanceof Refused) return error.published;
      throw error;
    }
  }

  private same(existing: Row, digest: string, subject: string): Published {
    return existing.digest === digest
      ? { status: 'exists', log_index: toNumber(existing.log_index) }
      : { status: 'conflict', log_index: toNumber(existing.log_index), subject };
  }

  private async page<T, C extends number | TimeCursor>(
    query: ListQuery<C>,
    columns: Parameters<typeof listClause>[1],
    select: string,
    map: (r: Row) => T,
    cursor: (item: T) => C,
  ): Promise<Page<T, C>> {
    const clause = listClause(query, columns);
    const rows = await this.db.all(`${select} ${clause.where} LIMIT ${clause.limit + 1}`, clause.params);
    const items = rows.slice(0, clause.limit).map(map);
    return { items, next: rows.length > clause.limit ? cursor(items[items.length - 1]!) : null };
  }

  /** An id column sorted and compared by its bytes, as SQLite does, so both stores page alike. */
  private bytewise(column: string): string {
    return this.dialect === 'postgres' ? `${column} COLLATE "C"` : column;
  }

  async certificate(serial: string): Promise<CertificateRow | null> {
    const rows = await this.db.all('SELECT * FROM certificates WHERE serial = ? AND log_index IS NOT NULL', [
      serial,
    ]);
    return rows[0] ? certificateRow(rows[0]) : null;
  }

  certificates(query: ListQuery): Promise<Page<CertificateRow>> {
    const columns = { order: 'log_index', agent: 'agent', ship: 'ship_id', time: 'issued_at' };
    return this.page(query, columns, 'SELECT * FROM certificates', certificateRow, (r) => r.log_index);
  }

  async package(session: string): Promise<PackageRow | null> {
    const rows = await this.db.all(
      `SELECT ${PACKAGE_COLUMNS} FROM packages WHERE session = ? AND log_index IS NOT NULL`,
      [session],
    );
    return rows[0] ? packageRow(rows[0]) : null;
  }

  async packageBytes(session: string): Promise<Buffer | null> {
    const rows = await this.db.all('SELECT bytes FROM packages WHERE session = ? AND log_index IS NOT NULL', [
      session,
    ]);
    return rows[0] ? toBuffer(rows[0].bytes) : null;
  }

  packages(query: ListQuery): Promise<Page<PackageRow>> {
    const columns = { order: 'log_index', agent: 'agent', ship: 'ship_id', time: 'started_at' };
    return this.page(
      query,
      columns,
      `SELECT ${PACKAGE_COLUMNS} FROM packages`,
      packageRow,
      (r) => r.log_index,
    );
  }

  async agent(slug: string): Promise<AgentRow | null> {
    const rows = await this.db.all('SELECT * FROM agents WHERE slug = ?', [slug]);
    return rows[0] ? agentRow(rows[0]) : null;
  }

  agents(query: ListQuery<TimeCursor>): Promise<Page<AgentRow, TimeCursor>> {
    const columns = { order: 'first_seen', id: this.bytewise('slug'), ship: 'ship_id', time: 'first_seen' };
    return this.page(query, columns, 'SELECT * FROM agents', agentRow, (r) => ({
      time: r.first_seen,
      id: r.slug,
    }));
  }

  async heads(session: string): Promise<HeadRow[]> {
    const rows = await this.db.all(
      'SELECT * FROM heads WHERE session = ? AND log_index IS NOT NULL ORDER BY seq',
      [session],
    );
    return rows.map(headRow);
  }

  async logHead(): Promise<LogHead> {
    const rows = await this.db.all('SELECT size, root, checkpoint FROM tlog_head WHERE id = 1');
    if (!rows[0]) throw new HubStoreError('log', 'the log has no head row (store not opened)');
    return {
      size: toNumber(rows[0].size),
      root: toBuffer(rows[0].root),
      checkpoint: rows[0].checkpoint as string,
    };
  }

  async tile(level: number, index: number): Promise<Buffer> {
    const rows = await this.db.all('SELECT hashes FROM tlog_tiles WHERE level = ? AND idx = ?', [
      level,
      index,
    ]);
    return rows[0] ? toBuffer(rows[0].hashes) : Buffer.alloc(0);
  }

  async entries(from: number, to: number): Promise<StoredEntry[]> {
    const rows = await this.db.all('SELECT * FROM tlog_entries WHERE idx >= ? AND idx < ? ORDER BY idx', [
      from,
      to,
    ]);
    return rows.map(entryRow);
  }
}
