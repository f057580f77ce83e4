/**
 * The transparency log's Merkle tree read from its tiles (C2SP tlog-tiles): node hashes, the root
 * of any size, and RFC 9162 inclusion and consistency proofs. A tile at level T holds the hashes
 * of the level-8T nodes; a node between two tile levels is rebuilt from at most 128 hashes of the
 * tile below it. Every hash a proof needs comes from stored tiles, so the proofs a reader computes
 * from the served tiles are the same ones the hub serves.
 */
import { EMPTY_TREE_ROOT, nodeHash } from '../../core/merkle.js';
import { TILE_HEIGHT, TILE_WIDTH } from '../../core/tlog-tiles.js';
import { HubStoreError } from '../store/hub-store.js';

const H = 32;

/** Stored tile hashes (full or partial); an absent tile is an empty buffer. */
export type TileSource = (level: number, index: number) => Promise<Buffer>;

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export class TreeReader {
  private readonly tiles = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly source: TileSource,
    readonly size: number,
  ) {}

  private tile(level: number, index: number): Promise<Buffer> {
    const key = `${level}/${index}`;
    let tile = this.tiles.get(key);
    if (!tile) {
      tile = this.source(level, index);
      this.tiles.set(key, tile);
    }
    return tile;
  }

  /** The hash of the complete subtree of height `height` whose first leaf is index * 2^height. */
  async node(height: number, index: number): Promise<Buffer> {
    const tileLevel = Math.floor(height / TILE_HEIGHT);
    const within = height % TILE_HEIGHT;
    const count = 2 ** within;
    const first = index * count;
    const tile = await this.tile(tileLevel, Math.floor(first / TILE_WIDTH));
    const offset = first % TILE_WIDTH;
    if (tile.length < (offset + count) * H)
      throw new HubStoreError('log', `the log has no node at height ${height}, index ${index}`);
    let level: Buffer[] = [];
    for (let i = 0; i < count; i++) level.push(tile.subarray((offset + i) * H, (offset + i + 1) * H));
    while (level.length > 1) {
      const next: Buffer[] = [];
      for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
      level = next;
    }
    return Buffer.from(level[0]!);
  }

  /** MTH(D[start:end]) for any range the RFC's recursive split produces. */
  async range(start: number, end: number): Promise<Buffer> {
    const n = end - start;
    if (n === 0) return Buffer.from(EMPTY_TREE_ROOT);
    const height = Math.log2(n);
    if (Number.isInteger(height) && start % n === 0) return this.node(height, start / n);
    const k = largestPowerOfTwoBelow(n);
    return nodeHash(await this.range(start, start + k), await this.range(start + k, end));
  }

  root(): Promise<Buffer> {
    return this.range(0, this.size);
  }

  /** PATH(index, D[size]) of RFC 9162 §2.1.3.1. */
  async inclusionProof(index: number, size = this.size): Promise<Buffer[]> {
    if (!Number.isSafeInteger(index) || index < 0 || index >= size || size > this.size)
      throw new HubStoreError('not-found', `no entry ${index} in a tree of ${size}`);
    const path: Buffer[] = [];
    const walk = async (m: number, lo: number, hi: number): Promise<void> => {
      if (hi - lo === 1) return;
      const k = largestPowerOfTwoBelow(hi - lo);
      if (m - lo < k) {
        await walk(m, lo, lo + k);
        path.push(await this.range(lo + k, hi));
      } else {
        await walk(m, lo + k, hi);
        path.push(await this.range(lo, lo + k));
      }
    };
    await walk(index, 0, size);
    return path;
  }

  /** PROOF(from, D[to]) of RFC 9162 §2.1.4.1; empty when from is 0 or equals to. */
  async consistencyProof(from: number, to = this.size): Promise<Buffer[]> {
    if (!Number.isSafeInteger(from) || from < 0 || from > to || to > this.size)
      throw new HubStoreError(
        'not-found',
        `no consistency proof from ${from} to ${to} in a tree of ${this.size}`,
      );
    if (from === 0 || from === to) return [];
    const proof: Buffer[] = [];
    const sub = async (m: number, lo: number, hi: number, complete: boolean): Promise<void> => {
      if (m === hi - lo) {
        if (!complete) proof.push(await this.range(lo, hi));
        return;
      }
      const k = largestPowerOfTwoBelow(hi - lo);
      if (m <= k) {
        await sub(m, lo, lo + k, complete);
        proof.push(await this.range(lo + k, hi));
      } else {
        await sub(m - k, lo + k, hi, false);
        proof.push(await this.range(lo, lo + k));
      }
    };
    await sub(from, 0, to, true);
    return proof;
  }
}
