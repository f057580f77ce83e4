/**
 * Appending to the transparency log inside a store transaction that holds the log's head: leaf
 * hashes go into the level-0 tile; a tile that fills hashes into the tile above it; the new root is
 * read back from the tiles and the checkpoint signed, all before the transaction commits. Every
 * replica runs this same code under the same lock, so indexes are dense and every checkpoint a
 * replica signs extends the one before it.
 */
import { leafHash, merkleRootFromLeafHashes } from '../../core/merkle.js';
import { TILE_WIDTH } from '../../core/tlog-tiles.js';
import { type LogEntry, logEntryBytes } from '../../hub-client/wire.js';
import { type TileSource, TreeReader } from './tree.js';

const H = 32;

export interface LogWriteTx {
  /** Locks the log's head row for the rest of the transaction and reads its size. */
  lockHead(): Promise<{ size: number }>;
  readTile: TileSource;
  writeTile(level: number, index: number, hashes: Buffer): Promise<void>;
  writeEntry(index: number, entry: LogEntry, bytes: Buffer): Promise<void>;
  writeHead(size: number, root: Buffer, checkpoint: string): Promise<void>;
}

export interface Appended {
  /** The index of each entry given, in order. */
  indexes: number[];
  size: number;
  root: Buffer;
  checkpoint: string;
}

export type CheckpointSigner = (size: number, root: Buffer) => string;

export async function appendEntries(
  tx: LogWriteTx,
  entries: readonly LogEntry[],
  signCheckpoint: CheckpointSigner,
): Promise<Appended> {
  const { size: start } = await tx.lockHead();
  const changed = new Map<string, Buffer>();
  const read: TileSource = async (level, index) =>
    changed.get(`${level}/${index}`) ?? (await tx.readTile(level, index));

  const addHash = async (level: number, position: number, hash: Buffer): Promise<void> => {
    const index = Math.floor(position / TILE_WIDTH);
    const tile = await read(level, index);
    if (tile.length !== (position % TILE_WIDTH) * H)
      throw new Error(
        `log tile ${level}/${index} holds ${tile.length / H} hashes, expected ${position % TILE_WIDTH}`,
      );
    const grown = Buffer.concat([tile, hash]);
    changed.set(`${level}/${index}`, grown);
    if (grown.length === TILE_WIDTH * H) {
      const hashes: Buffer[] = [];
      for (let i = 0; i < TILE_WIDTH; i++) hashes.push(grown.subarray(i * H, (i + 1) * H));
      await addHash(level + 1, index, merkleRootFromLeafHashes(hashes));
    }
  };

  const indexes: number[] = [];
  for (const [i, entry] of entries.entries()) {
    const index = start + i;
    const bytes = logEntryBytes(entry);
    await tx.writeEntry(index, entry, bytes);
    await addHash(0, index, leafHash(bytes));
    indexes.push(index);
  }
  const size = start + entries.length;
  for (const [key, hashes] of changed) {
    const [level, index] = key.split('/').map(Number) as [number, number];
    await tx.writeTile(level, index, hashes);
  }
  const root = await new TreeReader(read, size).root();
  const checkpoint = signCheckpoint(size, root);
  await tx.writeHead(size, root, checkpoint);
  return { indexes, size, root, checkpoint };
}
