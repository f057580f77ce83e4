/**
 * Test-only oracle for the Merkle tree: an independent reference written from the recursive
 * definitions of RFC 9162 §2.1, sharing no code with src/core/merkle.ts.
 */
import { createHash } from 'node:crypto';

// An independent reference, written from the recursive definitions of RFC 9162 §2.1 over ranges
// [start, end) of one leaf list. It is generic over the hash: with SHA-256 (node:crypto directly)
// it gives the expected hashes; with a symbolic "hash" that writes terms such as "(<0>,<1>)" it
// shows which subtrees a proof element stands for.

export function sha(...parts: Uint8Array[]): Buffer {
  const h = createHash('sha256');
  for (const part of parts) h.update(part);
  return h.digest();
}

export interface HashAlgebra<T> {
  empty: T;
  leaf(index: number): T;
  node(left: T, right: T): T;
}

export class Reference<T> {
  private readonly memo = new Map<string, T>();
  constructor(readonly algebra: HashAlgebra<T>) {}

  static k(n: number): number {
    let k = 1;
    while (k * 2 < n) k *= 2;
    return k;
  }

  /** MTH(D[start:end]). */
  mth(start: number, end: number): T {
    const key = `${start}:${end}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    const n = end - start;
    let out: T;
    if (n === 0) out = this.algebra.empty;
    else if (n === 1) out = this.algebra.leaf(start);
    else {
      const k = Reference.k(n);
      out = this.algebra.node(this.mth(start, start + k), this.mth(start + k, end));
    }
    this.memo.set(key, out);
    return out;
  }

  /** PATH(m, D[start:end]). */
  path(m: number, start: number, end: number): T[] {
    const n = end - start;
    if (n === 1) return [];
    const k = Reference.k(n);
    if (m < k) return [...this.path(m, start, start + k), this.mth(start + k, end)];
    return [...this.path(m - k, start + k, end), this.mth(start, start + k)];
  }

  /** PROOF(m, D[0:n]) = SUBPROOF(m, D[0:n], true), for 0 < m <= n. */
  proof(m: number, n: number): T[] {
    return this.subproof(m, 0, n, true);
  }

  private subproof(m: number, start: number, end: number, b: boolean): T[] {
    const n = end - start;
    if (m === n) return b ? [] : [this.mth(start, end)];
    const k = Reference.k(n);
    if (m <= k) return [...this.subproof(m, start, start + k, b), this.mth(start + k, end)];
    return [...this.subproof(m - k, start + k, end, false), this.mth(start, start + k)];
  }
}

export const SYM = new Reference<string>({
  empty: 'e',
  leaf: (i) => `<${i}>`,
  node: (l, r) => `(${l},${r})`,
});

function substitute(term: string, pairs: readonly (readonly [string, string])[]): string {
  let out = term;
  for (const [from, to] of pairs) out = out.split(from).join(to);
  return out;
}

/**
 * Whether the proof of leaf `i` in a tree of `n`, with that tree's root, also holds when read as
 * leaf `i2` of a tree of `n2`. A verifier sees proof elements only as opaque hashes, so this
 * happens exactly when the root of the (i2, n2) shape, written over its own proof elements, turns
 * into the root of the (i, n) tree when those elements are replaced by the real ones.
 */
export function inclusionHoldsAs(i: number, n: number, i2: number, n2: number): boolean {
  if (i2 < 0 || i2 >= n2) return false;
  const real = SYM.path(i, 0, n);
  const shape = SYM.path(i2, 0, n2);
  if (real.length !== shape.length) return false;
  const template = substitute(SYM.mth(0, n2), [
    [`<${i2}>`, '#L#'],
    ...shape.map((t, j) => [t, `#${j}#`] as const),
  ]);
  const filled = substitute(template, [['#L#', `<${i}>`], ...real.map((t, j) => [`#${j}#`, t] as const)]);
  return filled === SYM.mth(0, n);
}

/** The same question for the consistency proof of m -> n read as m2 -> n2 (0 < m < n). */
export function consistencyHoldsAs(m: number, n: number, m2: number, n2: number): boolean {
  if (m2 <= 0 || m2 >= n2) return false;
  const real = SYM.proof(m, n);
  const shape = SYM.proof(m2, n2);
  if (real.length !== shape.length) return false;
  // When m2 is a power of two the old root is itself an input of the verification.
  const oldIsInput = Reference.k(m2) * 2 === m2 || m2 === 1;
  const pairs = [
    ...(oldIsInput ? [[SYM.mth(0, m2), '#O#'] as const] : []),
    ...shape.map((t, j) => [t, `#${j}#`] as const),
  ];
  const back = [['#O#', SYM.mth(0, m)] as const, ...real.map((t, j) => [`#${j}#`, t] as const)];
  const oldFilled = substitute(substitute(SYM.mth(0, m2), pairs), back);
  const newFilled = substitute(substitute(SYM.mth(0, n2), pairs), back);
  return oldFilled === SYM.mth(0, m) && newFilled === SYM.mth(0, n);
}
