/**
 * The RFC 9162 Merkle root computed as leaf hashes arrive, in O(log n) memory: a stack of the
 * roots of complete subtrees of decreasing size. Folding the stack from the right gives MTH(D[n]),
 * because the RFC splits a tree at the largest power of two below its size, which is exactly the
 * bottom of the stack.
 */
import { EMPTY_TREE_ROOT, MERKLE_HASH_SIZE, MerkleError, nodeHash } from '../../core/merkle.js';

export class MerkleAccumulator {
  private readonly hashes: Buffer[] = [];
  private readonly sizes: number[] = [];
  private leaves = 0;

  get size(): number {
    return this.leaves;
  }

  /** Adds the next leaf hash (SHA-256(0x00 || d), or the record digest the package uses as one). */
  add(leafHash: Uint8Array): void {
    if (leafHash.length !== MERKLE_HASH_SIZE)
      throw new MerkleError('BAD_HASH_LENGTH', `leaf hash ${this.leaves} is not ${MERKLE_HASH_SIZE} bytes`);
    let hash: Buffer = Buffer.from(leafHash);
    let size = 1;
    while (this.sizes.length > 0 && this.sizes[this.sizes.length - 1] === size) {
      hash = nodeHash(this.hashes.pop()!, hash);
      this.sizes.pop();
      size *= 2;
    }
    this.hashes.push(hash);
    this.sizes.push(size);
    this.leaves++;
  }

  /** MTH over every leaf added so far. */
  root(): Buffer {
    if (this.hashes.length === 0) return Buffer.from(EMPTY_TREE_ROOT);
    let hash = this.hashes[this.hashes.length - 1]!;
    for (let i = this.hashes.length - 2; i >= 0; i--) hash = nodeHash(this.hashes[i]!, hash);
    return Buffer.from(hash);
  }
}
