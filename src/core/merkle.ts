/**
 * Merkle tree of RFC 9162 §2.1: root hash, inclusion proofs and consistency proofs.
 *
 * Hashes are SHA-256 with domain separation: leaves are SHA-256(0x00 || d), interior nodes
 * SHA-256(0x01 || left || right), and the empty tree is SHA-256(""). A tree of n leaves splits at
 * the largest power of two strictly less than n.
 *
 * Trees are built bottom-up, level by level, in one packed buffer of 32-byte hashes: pairing
 * neighbours and carrying an unpaired last node up unchanged gives exactly the RFC's recursive
 * split, without recursion or a Buffer per node.
 */
import * as crypto from 'node:crypto';
import { TallyError } from './errors.js';
import { sha256 } from './hash.js';

export type MerkleErrorCode = 'INDEX_OUT_OF_RANGE' | 'SIZE_OUT_OF_RANGE' | 'BAD_ARGUMENT' | 'BAD_HASH_LENGTH';

export class MerkleError extends TallyError<MerkleErrorCode> {}

/** Bytes in every hash of the tree. */
export const MERKLE_HASH_SIZE = 32;
const H = MERKLE_HASH_SIZE;

/** Leaves longer than this are hashed with a streaming update instead of through the scratch buffer. */
const SCRATCH_LEAF_LIMIT = 4096;
const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

// One-shot hashing avoids a Hash object per call; it exists from Node 20.12, so fall back to
// createHash on older runtimes.
const oneShot: ((algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer) | undefined =
  typeof crypto.hash === 'function' ? crypto.hash : undefined;

/** Reused input buffer for 0x01 || l || r (and 0x00 || d for short leaves). */
const scratch = Buffer.alloc(1 + SCRATCH_LEAF_LIMIT);

function digestScratch(length: number): Buffer {
  const input = scratch.subarray(0, length);
  return oneShot ? oneShot('sha256', input, 'buffer') : crypto.createHash('sha256').update(input).digest();
}

/** SHA-256(0x00 || data): the hash of one leaf. */
export function leafHash(data: Uint8Array): Buffer {
  if (!(data instanceof Uint8Array)) throw new MerkleError('BAD_ARGUMENT', 'leaf data is not a byte array');
  if (data.length > SCRATCH_LEAF_LIMIT) {
    return crypto.createHash('sha256').update(LEAF_PREFIX).update(data).digest();
  }
  scratch[0] = 0x00;
  scratch.set(data, 1);
  return digestScratch(1 + data.length);
}

/** SHA-256(0x01 || left || right): the hash of an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== H || right.length !== H) {
    return crypto.createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
  }
  scratch[0] = 0x01;
  scratch.set(left, 1);
  scratch.set(right, 1 + H);
  return digestScratch(1 + 2 * H);
}

/** Hashes the 64 bytes at `src[from..]` as an interior node and writes the result at `dst[to..]`. */
function hashPairInto(src: Buffer, from: number, dst: Buffer, to: number): void {
  scratch[0] = 0x01;
  src.copy(scratch, 1, from, from + 2 * H);
  digestScratch(1 + 2 * H).copy(dst, to);
}

/** The RFC 9162 root of the empty tree: SHA-256 of no bytes. */
export const EMPTY_TREE_ROOT: Buffer = sha256(new Uint8Array(0));

// Packed levels

function packLeaves(leaves: readonly Uint8Array[]): Buffer {
  const packed = Buffer.allocUnsafe(leaves.length * H);
  for (let i = 0; i < leaves.length; i++) {
    const leaf = leaves[i];
    if (!(leaf instanceof Uint8Array)) {
      throw new MerkleError('BAD_ARGUMENT', `leaf ${i} is not a byte array`, { field: 'leaves', index: i });
    }
    leafHash(leaf).copy(packed, i * H);
  }
  return packed;
}

function packLeafHashes(hashes: readonly Uint8Array[]): Buffer {
  const packed = Buffer.allocUnsafe(hashes.length * H);
  for (let i = 0; i < hashes.length; i++) {
    const hash = hashes[i];
    if (!(hash instanceof Uint8Array) || hash.length !== H) {
      throw new MerkleError('BAD_HASH_LENGTH', `leaf hash ${i} is not ${H} bytes`, {
        field: 'hashes',
        index: i,
      });
    }
    packed.set(hash, i * H);
  }
  return packed;
}

/** Reduces a packed level of `count` hashes to the root, overwriting the level as it goes. */
function reduceInPlace(level: Buffer, count: number): Buffer {
  if (count === 0) return Buffer.from(EMPTY_TREE_ROOT);
  let n = count;
  while (n > 1) {
    const pairs = Math.floor(n / 2);
    // Parent i lands at 32*i, at or before the pair it was read from, so writing in place is safe.
    for (let i = 0; i < pairs; i++) hashPairInto(level, 2 * i * H, level, i * H);
    if (n % 2 === 1) level.copy(level, pairs * H, (n - 1) * H, n * H);
    n = pairs + (n % 2);
  }
  return Buffer.from(level.subarray(0, H));
}

/** Every level of the tree, leaves first; level L holds ceil(n / 2^L) hashes. */
function buildLevels(leafLevel: Buffer, count: number): Buffer[] {
  const levels = [leafLevel];
  let level = leafLevel;
  let n = count;
  while (n > 1) {
    const pairs = Math.floor(n / 2);
    const next = Buffer.allocUnsafe((pairs + (n % 2)) * H);
    for (let i = 0; i < pairs; i++) hashPairInto(level, 2 * i * H, next, i * H);
    if (n % 2 === 1) level.copy(next, pairs * H, (n - 1) * H, n * H);
    levels.push(next);
    level = next;
    n = pairs + (n % 2);
  }
  return levels;
}

function hashAt(level: Buffer | undefined, index: number): Buffer {
  if (level === undefined || (index + 1) * H > level.length)
    throw new Error('merkle: node outside its level');
  return Buffer.from(level.subarray(index * H, (index + 1) * H));
}

/**
 * MTH(D[start:end]) for a subtree of the RFC split of D[0:size]: such a subtree starts at a
 * multiple of 2^L, where 2^L is the smallest power of two holding it, and is either complete or
 * runs to the end of the tree, so it is node start/2^L of level L.
 */
function subtreeHash(levels: readonly Buffer[], start: number, end: number): Buffer {
  let width = 1;
  let level = 0;
  while (width < end - start) {
    width *= 2;
    level++;
  }
  if (start % width !== 0) throw new Error('merkle: range is not a subtree');
  return hashAt(levels[level], start / width);
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

// Roots

/** MTH(D[n]) of RFC 9162 §2.1.1 over leaf data. */
export function merkleRoot(leaves: readonly Uint8Array[]): Buffer {
  checkArray(leaves, 'leaves');
  return reduceInPlace(packLeaves(leaves), leaves.length);
}

/** MTH(D[n]) when the leaf hashes SHA-256(0x00 || d) are already known. */
export function merkleRootFromLeafHashes(hashes: readonly Uint8Array[]): Buffer {
  checkArray(hashes, 'hashes');
  return reduceInPlace(packLeafHashes(hashes), hashes.length);
}

// Inclusion proofs (RFC 9162 §2.1.3)

/** PATH(index, D[n]): the sibling hashes from the leaf up to the root. */
export function inclusionProof(leaves: readonly Uint8Array[], index: number): Buffer[] {
  checkArray(leaves, 'leaves');
  checkIndex(index, leaves.length);
  return pathFromLevels(buildLevels(packLeaves(leaves), leaves.length), index, leaves.length);
}

/** PATH(index, D[n]) when the leaf hashes are already known. */
export function inclusionProofFromLeafHashes(hashes: readonly Uint8Array[], index: number): Buffer[] {
  checkArray(hashes, 'hashes');
  checkIndex(index, hashes.length);
  return pathFromLevels(buildLevels(packLeafHashes(hashes), hashes.length), index, hashes.length);
}

function pathFromLevels(levels: readonly Buffer[], index: number, size: number): Buffer[] {
  const path: Buffer[] = [];
  let i = index;
  let n = size;
  for (let level = 0; n > 1; level++) {
    const sibling = i % 2 === 0 ? i + 1 : i - 1;
    // A last node without a sibling is carried up unchanged and adds nothing to the path.
    if (sibling < n) path.push(hashAt(levels[level], sibling));
    i = Math.floor(i / 2);
    n = Math.ceil(n / 2);
  }
  return path;
}

/** Checks an inclusion proof for leaf data; see verifyInclusionHash. */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!(leaf instanceof Uint8Array)) return false;
  return verifyInclusionHash(leafHash(leaf), index, treeSize, proof, root);
}

/**
 * The verification algorithm of RFC 9162 §2.1.3.2. Returns false, never throws, for any
 * malformed input: index outside the tree, sizes that are not non-negative safe integers, a proof
 * of the wrong length or elements that are not 32 bytes.
 */
export function verifyInclusionHash(
  leafHashValue: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!isCount(index) || !isCount(treeSize) || index >= treeSize) return false;
  if (!isHash(leafHashValue) || !isHash(root) || !isProof(proof)) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r: Uint8Array = leafHashValue;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && Buffer.compare(r, root) === 0;
}

// Consistency proofs (RFC 9162 §2.1.4)

/**
 * PROOF(oldSize, D[n]): the hashes proving the tree of the first oldSize leaves is a prefix of
 * this one. Empty when oldSize is 0 or n.
 */
export function consistencyProof(leaves: readonly Uint8Array[], oldSize: number): Buffer[] {
  checkArray(leaves, 'leaves');
  checkOldSize(oldSize, leaves.length);
  return proofFromLevels(leaves.length, oldSize, () => buildLevels(packLeaves(leaves), leaves.length));
}

/** PROOF(oldSize, D[n]) when the leaf hashes are already known. */
export function consistencyProofFromLeafHashes(hashes: readonly Uint8Array[], oldSize: number): Buffer[] {
  checkArray(hashes, 'hashes');
  checkOldSize(oldSize, hashes.length);
  return proofFromLevels(hashes.length, oldSize, () => buildLevels(packLeafHashes(hashes), hashes.length));
}

function proofFromLevels(size: number, oldSize: number, levelsOf: () => Buffer[]): Buffer[] {
  if (oldSize === 0 || oldSize === size) return [];
  const levels = levelsOf();
  const out: Buffer[] = [];
  subproof(levels, oldSize, 0, size, true, out);
  return out;
}

/** SUBPROOF(m, D[start:end], complete) over index ranges of the built tree. */
function subproof(
  levels: readonly Buffer[],
  m: number,
  start: number,
  end: number,
  complete: boolean,
  out: Buffer[],
): void {
  const n = end - start;
  if (m === n) {
    if (!complete) out.push(subtreeHash(levels, start, end));
    return;
  }
  const k = largestPowerOfTwoBelow(n);
  if (m <= k) {
    subproof(levels, m, start, start + k, complete, out);
    out.push(subtreeHash(levels, start + k, end));
  } else {
    subproof(levels, m - k, start + k, end, false, out);
    out.push(subtreeHash(levels, start, start + k));
  }
}

/**
 * The verification algorithm of RFC 9162 §2.1.4.2, extended to the trivial cases: an empty old
 * tree (its root must be the empty-tree hash, the proof empty) and equal sizes (equal roots,
 * empty proof). Returns false, never throws, for malformed input.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isCount(oldSize) || !isCount(newSize) || oldSize > newSize) return false;
  if (!isHash(oldRoot) || !isHash(newRoot) || !isProof(proof)) return false;
  if (oldSize === 0) return proof.length === 0 && Buffer.compare(oldRoot, EMPTY_TREE_ROOT) === 0;
  if (oldSize === newSize) return proof.length === 0 && Buffer.compare(oldRoot, newRoot) === 0;
  if (proof.length === 0) return false;

  const path: readonly Uint8Array[] = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Uint8Array = path[0] as Uint8Array;
  let sr: Uint8Array = fr;
  for (let i = 1; i < path.length; i++) {
    const c = path[i] as Uint8Array;
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && Buffer.compare(fr, oldRoot) === 0 && Buffer.compare(sr, newRoot) === 0;
}

// Argument checks

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === H;
}

function isProof(proof: unknown): proof is readonly Uint8Array[] {
  return Array.isArray(proof) && proof.every(isHash);
}

function isPowerOfTwo(n: number): boolean {
  return largestPowerOfTwoBelow(n) * 2 === n || n === 1;
}

function checkArray(value: unknown, name: string): void {
  if (!Array.isArray(value))
    throw new MerkleError('BAD_ARGUMENT', `${name} must be an array`, { field: name });
}

function checkIndex(index: number, size: number): void {
  if (!isCount(index)) {
    throw new MerkleError('BAD_ARGUMENT', `leaf index ${String(index)} is not a non-negative integer`, {
      field: 'index',
    });
  }
  if (index >= size) {
    throw new MerkleError('INDEX_OUT_OF_RANGE', `leaf index ${index} is outside a tree of ${size} leaves`, {
      field: 'index',
      index,
      size,
    });
  }
}

function checkOldSize(oldSize: number, size: number): void {
  if (!isCount(oldSize)) {
    throw new MerkleError('BAD_ARGUMENT', `old tree size ${String(oldSize)} is not a non-negative integer`, {
      field: 'oldSize',
    });
  }
  if (oldSize > size) {
    throw new MerkleError(
      'SIZE_OUT_OF_RANGE',
      `old tree size ${oldSize} is larger than the tree of ${size} leaves`,
      {
        field: 'oldSize',
        oldSize,
        size,
      },
    );
  }
}
