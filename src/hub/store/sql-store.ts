/**
 * HubStore over either SQL driver. Each publish is one transaction: claim the id (and the agent
 * slug), insert the row write-once, then append to the log under the head lock and record the
 * index. Row locks are taken before the head lock in every transaction, so concurrent replicas
 * cannot deadlock; the head lock alone orders the log.
 */
import type { LogEntry } from '../../hub-client/wire.js';
import { appendEntries, type CheckpointSigner, type LogWriteTx } from '../log/append.js';
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
  type Unlogged,
} from './hub-store.js';
import { migrations } from './migrations.js';
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

/**
 * The log's side of a transaction. The head row is locked FOR UPDATE on PostgreSQL; on SQLite,
 * BEGIN IMMEDIATE already holds the database's write lock.
 */
function logTx(sql: Sql, dialect: 'sqlite' | 'postgres'): LogWriteTx {
  return {
    async lockHead() {
      const lock = dialect === 'postgres' ? ' FOR UPDATE' : '';
      const rows = await sql.all(`SELECT size FROM tlog_head WHERE id = 1${lock}`);
      if (rows.length === 0) throw new HubStoreError('log', 'the log has no head row (store not opened)');
      return { size: toNumber(rows[0]!.size) };
    },
    readTile: async (level, index) => {
      const rows = await sql.all('SELECT hashes FROM tlog_tiles WHERE level = ? AND idx = ?', [level, index]);
      return rows.length === 0 ? Buffer.alloc(0) : toBuffer(rows[0]!.hashes);
    },
    async writeTile(level, index, hashes) {
      await sql.run(
        'INSERT INTO tlog_tiles (level, idx, hashes) VALUES (?, ?, ?) ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes',
        [level, index, hashes],
      );
    },
    async writeEntry(index, entry, bytes) {
      await sql.run(
        'INSERT INTO tlog_entries (idx, kind, ship_id, id, digest, entry) VALUES (?, ?, ?, ?, ?, ?)',
        [index, entry.kind, entry.ship_id, entry.id, entry.digest, bytes],
      );
    },
    async writeHead(size, root, checkpoint) {
      await sql.run('UPDATE tlog_head SET size = ?, root = ?, checkpoint = ? WHERE id = 1', [
        size,
        root,
        checkpoint,
      ]);
    },
  };
}

export class SqlStore implements HubStore {
  readonly dialect: 'sqlite' | 'postgres';
  private signCheckpoint: CheckpointSigner | null = null;

  constructor(private readonly db: SqlDriver) {
    this.dialect = db.dialect;
  }

  async open(hub: { origin: string; publicKey: string }, signCheckpoint: CheckpointSigner): Promise<void> {
    this.signCheckpoint = signCheckpoint;
    await this.db.transaction(
      async (sql) => {
        if (this.dialect === 'sqlite')
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
        for (const migration of migrations(this.dialect)) {
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

  /** Claims `id` for `ship`; returns the owner when another ship already holds it. */
  private async claim(
    sql: Sql,
    table: 'claims' | 'agents',
    id: string,
    ship: string,
    now: number,
  ): Promise<string | null> {
    const [key, time] = table === 'claims' ? ['id', 'claimed_at'] : ['slug', 'first_seen'];
    await sql.run(
      `INSERT INTO ${table} (${key}, ship_id, ${time}) VALUES (?, ?, ?) ON CONFLICT (${key}) DO NOTHING`,
      [id, ship, now],
    );
    const owner = (await sql.all(`SELECT ship_id FROM ${table} WHERE ${key} = ?`, [id]))[0]
      ?.ship_id as string;
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
    const rows = await this.db.all('SELECT * FROM ships WHERE ship_id = ?', [shipId]);
    return rows[0] ? shipRow(rows[0]) : null;
  }

  async ships(query: ListQuery): Promise<Page<ShipRow>> {
    return this.page(
      query,
      { order: 'registered_at' },
      'SELECT * FROM ships',
      shipRow,
      (r) => r.registered_at,
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

  async hit(bucket: string, window: number): Promise<number> {
    if (Math.random() < 0.001)
      await this.db.run('DELETE FROM rate_counters WHERE window_start < ?', [window - 3_600_000]);
    const rows = await this.db.all(
      'INSERT INTO rate_counters (bucket, window_start, hits) VALUES (?, ?, 1) ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_counters.hits + 1 RETURNING hits',
      [bucket, window],
    );
    return toNumber(rows[0]?.hits);
  }

  publishCertificate(row: Unlogged<CertificateRow>): Promise<Published> {
    return this.db.transaction(async (sql) => {
      const owner = await this.claim(sql, 'agents', row.agent, row.ship_id, row.received_at);
      if (owner) return { status: 'forbidden', owner, subject: 'agent' };
      const existing = await sql.all('SELECT digest, log_index FROM certificates WHERE serial = ?', [
        row.serial,
      ]);
      if (existing[0]) return this.same(existing[0], row.digest, 'serial');
      await sql.run(
        'INSERT INTO certificates (serial, ship_id, agent, digest, envelope, issued_at, valid_from, valid_until, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
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
      );
      const index = await this.append(sql, {
        kind: 'certificate',
        ship_id: row.ship_id,
        id: row.serial,
        digest: row.digest,
      });
      await sql.run('UPDATE certificates SET log_index = ? WHERE serial = ?', [index, row.serial]);
      return { status: 'created', log_index: index };
    });
  }

  publishPackage(row: Unlogged<PackageRow>, bytes: Buffer): Promise<Published> {
    return this.db.transaction(async (sql) => {
      const owner = await this.claim(sql, 'claims', row.session, row.ship_id, row.received_at);
      if (owner) return { status: 'forbidden', owner, subject: 'session' };
      const existing = await sql.all('SELECT digest, log_index FROM packages WHERE session = ?', [
        row.session,
      ]);
      if (existing[0]) return this.same(existing[0], row.digest, 'session');
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
      await sql.run(
        `INSERT INTO packages (${PACKAGE_COLUMNS.replace(', log_index', '')}, bytes) VALUES (${values.map(() => '?').join(', ')})`,
        values,
      );
      const index = await this.append(sql, {
        kind: 'package',
        ship_id: row.ship_id,
        id: row.session,
        digest: row.digest,
      });
      await sql.run('UPDATE packages SET log_index = ? WHERE session = ?', [index, row.session]);
      return { status: 'created', log_index: index };
    });
  }

  witnessHead(row: Unlogged<HeadRow>): Promise<Published> {
    return this.db.transaction(async (sql) => {
      const owner = await this.claim(sql, 'claims', row.session, row.ship_id, row.received_at);
      if (owner) return { status: 'forbidden', owner, subject: 'session' };
      const existing = await sql.all('SELECT digest, log_index FROM heads WHERE session = ? AND seq = ?', [
        row.session,
        row.seq,
      ]);
      if (existing[0]) return this.same(existing[0], row.digest, 'seq');
      await sql.run(
        'INSERT INTO heads (session, seq, record_digest, digest, ship_id, time, envelope, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [
          row.session,
          row.seq,
          row.record_digest,
          row.digest,
          row.ship_id,
          row.time,
          row.envelope,
          row.received_at,
        ],
      );
      const index = await this.append(sql, {
        kind: 'head',
        ship_id: row.ship_id,
        id: row.session,
        digest: row.digest,
      });
      await sql.run('UPDATE heads SET log_index = ? WHERE session = ? AND seq = ?', [
        index,
        row.session,
        row.seq,
      ]);
      return { status: 'created', log_index: index };
    });
  }

  private same(existing: Row, digest: string, subject: string): Published {
    return existing.digest === digest
      ? { status: 'exists', log_index: toNumber(existing.log_index) }
      : { status: 'conflict', log_index: toNumber(existing.log_index), subject };
  }

  private async page<T>(
    query: ListQuery,
    columns: Parameters<typeof listClause>[1],
    select: string,
    map: (r: Row) => T,
    order: (item: T) => number,
  ): Promise<Page<T>> {
    const clause = listClause(query, columns);
    const rows = await this.db.all(`${select} ${clause.where} LIMIT ${clause.limit + 1}`, clause.params);
    const items = rows.slice(0, clause.limit).map(map);
    return { items, next: rows.length > clause.limit ? order(items[items.length - 1]!) : null };
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

  agents(query: ListQuery): Promise<Page<AgentRow>> {
    const columns = { order: 'first_seen', ship: 'ship_id', time: 'first_seen' };
    return this.page(query, columns, 'SELECT * FROM agents', agentRow, (r) => r.first_seen);
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
