/** The transparency log's side of a store transaction, over either SQL driver. */
import type { LogWriteTx } from '../log/append.js';
import { HubStoreError } from './hub-store.js';
import { type Sql, toBuffer, toNumber } from './sql.js';

/**
 * The log's side of a transaction. The head row is locked FOR UPDATE on PostgreSQL; on SQLite,
 * BEGIN IMMEDIATE already holds the database's write lock.
 */
export function logTx(sql: Sql, dialect: 'sqlite' | 'postgres'): LogWriteTx {
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
