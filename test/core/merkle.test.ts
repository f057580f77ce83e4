import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { TallyError } from '../../src/core/errors.js';
import {
  consistencyProof,
  consistencyProofFromLeafHashes,
  inclusionProof,
  inclusionProofFromLeafHashes,
  leafHash,
  MerkleError,
  merkleRoot,
  merkleRootFromLeafHashes,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
  verifyInclusionHash,
} from '../../src/core/merkle.js';
import { consistencyHoldsAs, inclusionHoldsAs, Reference, sha } from './merkle-reference.js';

const hex = (h: string): Buffer => Buffer.from(h, 'hex');
const hexes = (list: readonly Buffer[]): string[] => list.map((b) => b.toString('hex'));

// Reference vectors of the RFC 6962 test tree, as published in the certificate-transparency test
// suite (C++ merkle_tree_test.cc) and carried over to transparency-dev/merkle proof/verify_test.go
// (`leaves`, `roots`, `inclusionProofs`, `consistencyProofs`). Leaf indices there are 1-based;
// they are 0-based here.
const CT_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map(hex);
/** CT_ROOTS[n] is the root of the first n leaves; size 0 is SHA-256 of nothing. */
const CT_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const CT_INCLUSION: { index: number; size: number; proof: string[] }[] = [
  { index: 0, size: 1, proof: [] },
  {
    index: 0,
    size: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { index: 2, size: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    index: 1,
    size: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];
const CT_CONSISTENCY: { oldSize: number; newSize: number; proof: string[] }[] = [
  { oldSize: 1, newSize: 1, proof: [] },
  {
    oldSize: 1,
    newSize: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    oldSize: 6,
    newSize: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    oldSize: 2,
    newSize: 5,
    proof: [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
  {
    oldSize: 6,
    newSize: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

/** Deterministic leaves of varied lengths (0..40 bytes), including one longer than 4 KiB. */
function makeLeaves(count: number): Buffer[] {
  const leaves: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const length = i === 77 ? 5000 : (i * 7) % 41;
    leaves.push(seeded(i, length));
  }
  return leaves;
}

function seeded(i: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  let block = sha(Buffer.from(`leaf ${i}`));
  for (let o = 0; o < length; o += 32) {
    block.copy(out, o, 0, Math.min(32, length - o));
    block = sha(block);
  }
  return out;
}

function flipBit(bytes: Uint8Array, bit: number): Buffer {
  const out = Buffer.from(bytes);
  const byte = Math.floor(bit / 8) % out.length;
  out[byte] = (out[byte] as number) ^ (1 << (bit % 8));
  return out;
}

const LEAVES = makeLeaves(300);
const REF = new Reference<Buffer>({
  empty: sha(),
  leaf: (i) => sha(Buffer.from([0]), LEAVES[i] as Buffer),
  node: (l, r) => sha(Buffer.from([1]), l, r),
});

// ---------------------------------------------------------------------------------------------

describe('RFC 9162 Merkle tree: certificate-transparency reference vectors', () => {
  it('computes the known root of every prefix of the test tree (sizes 0..8)', () => {
    for (let n = 0; n <= 8; n++) {
      assert.equal(merkleRoot(CT_LEAVES.slice(0, n)).toString('hex'), CT_ROOTS[n], `size ${n}`);
    }
  });

  it('hashes a leaf as SHA-256(0x00 || d) and a node as SHA-256(0x01 || l || r)', () => {
    assert.equal(leafHash(new Uint8Array(0)).toString('hex'), CT_ROOTS[1]);
    const l = leafHash(CT_LEAVES[0] as Buffer);
    const r = leafHash(CT_LEAVES[1] as Buffer);
    assert.equal(nodeHash(l, r).toString('hex'), CT_ROOTS[2]);
  });

  it('produces and verifies the known inclusion proofs', () => {
    for (const v of CT_INCLUSION) {
      const leaves = CT_LEAVES.slice(0, v.size);
      assert.deepEqual(hexes(inclusionProof(leaves, v.index)), v.proof, `${v.index} in ${v.size}`);
      const root = hex(CT_ROOTS[v.size] as string);
      const leaf = CT_LEAVES[v.index] as Buffer;
      assert.equal(verifyInclusion(leaf, v.index, v.size, v.proof.map(hex), root), true);
      assert.equal(verifyInclusionHash(leafHash(leaf), v.index, v.size, v.proof.map(hex), root), true);
    }
  });

  it('produces and verifies the known consistency proofs', () => {
    for (const v of CT_CONSISTENCY) {
      const leaves = CT_LEAVES.slice(0, v.newSize);
      assert.deepEqual(hexes(consistencyProof(leaves, v.oldSize)), v.proof, `${v.oldSize} -> ${v.newSize}`);
      const oldRoot = hex(CT_ROOTS[v.oldSize] as string);
      const newRoot = hex(CT_ROOTS[v.newSize] as string);
      assert.equal(verifyConsistency(v.oldSize, v.newSize, oldRoot, newRoot, v.proof.map(hex)), true);
    }
  });

  it('rejects every single-bit change of the 6 -> 8 consistency proof, its roots, and of the leaf 5 proof', () => {
    const c = CT_CONSISTENCY[2] as (typeof CT_CONSISTENCY)[number];
    const proof = c.proof.map(hex);
    const oldRoot = hex(CT_ROOTS[6] as string);
    const newRoot = hex(CT_ROOTS[8] as string);
    const i = CT_INCLUSION[2] as (typeof CT_INCLUSION)[number];
    const iproof = i.proof.map(hex);
    const leaf = leafHash(CT_LEAVES[5] as Buffer);
    for (let bit = 0; bit < 256; bit++) {
      assert.equal(verifyConsistency(6, 8, flipBit(oldRoot, bit), newRoot, proof), false);
      assert.equal(verifyConsistency(6, 8, oldRoot, flipBit(newRoot, bit), proof), false);
      assert.equal(verifyInclusionHash(flipBit(leaf, bit), 5, 8, iproof, newRoot), false);
      assert.equal(verifyInclusionHash(leaf, 5, 8, iproof, flipBit(newRoot, bit)), false);
      for (let e = 0; e < 3; e++) {
        const bad = proof.map((p, j) => (j === e ? flipBit(p, bit) : p));
        assert.equal(verifyConsistency(6, 8, oldRoot, newRoot, bad), false);
        const ibad = iproof.map((p, j) => (j === e ? flipBit(p, bit) : p));
        assert.equal(verifyInclusionHash(leaf, 5, 8, ibad, newRoot), false);
      }
    }
  });
});

describe('RFC 9162 Merkle tree: agreement with the recursive reference', () => {
  it('computes the same root for every size 0..300, from data and from leaf hashes', () => {
    const hashes = LEAVES.map((d) => sha(Buffer.from([0]), d));
    for (let n = 0; n <= 300; n++) {
      const want = REF.mth(0, n).toString('hex');
      assert.equal(merkleRoot(LEAVES.slice(0, n)).toString('hex'), want, `size ${n}`);
      assert.equal(merkleRootFromLeafHashes(hashes.slice(0, n)).toString('hex'), want, `size ${n}`);
    }
  });

  it('produces the same inclusion and consistency proofs for sizes 1..300', () => {
    const hashes = LEAVES.map((d) => leafHash(d));
    for (let n = 1; n <= 300; n++) {
      // Every index up to 64 leaves; beyond, the edges, the middle and a stride of 23.
      const picks =
        n <= 64
          ? [...Array(n).keys()]
          : [0, 1, n >> 1, n - 2, n - 1, ...[...Array(n).keys()].filter((x) => x % 23 === 5)];
      const leaves = LEAVES.slice(0, n);
      for (const m of picks) {
        const want = hexes(REF.path(m, 0, n));
        assert.deepEqual(
          hexes(inclusionProofFromLeafHashes(hashes.slice(0, n), m)),
          want,
          `PATH(${m}, ${n})`,
        );
        const wantProof = m === 0 ? [] : hexes(REF.proof(m, n));
        assert.deepEqual(
          hexes(consistencyProofFromLeafHashes(hashes.slice(0, n), m)),
          wantProof,
          `PROOF(${m}, ${n})`,
        );
      }
      assert.deepEqual(hexes(inclusionProof(leaves, n - 1)), hexes(REF.path(n - 1, 0, n)));
      assert.deepEqual(hexes(consistencyProof(leaves, n)), []);
    }
  });
});

describe('RFC 9162 Merkle tree: Treeship v2 interop vectors', () => {
  // Read in place. The file says it is derived (a port of Treeship's tree.rs), not upstream output,
  // so it is a secondary oracle: leaves are sha256(0x00 || artifact id), nodes sha256(0x01 || l || r).
  interface Vectors {
    trees: {
      artifact_ids: string[];
      root_hex: string;
      inclusion_proofs: { leaf_index: number; leaf_hash: string; path: { hash: string }[] }[];
      consistency_to_this_size: { old_size: number; old_root: string; proof: string[] }[];
    }[];
  }
  const url = new URL(
    '../../../../shared/reference/treeship-vectors/derived/merkle-v2-derived.json',
    import.meta.url,
  );
  const vectors = JSON.parse(readFileSync(url, 'utf8')) as Vectors;

  it('reproduces every root, leaf hash, inclusion proof and consistency proof', () => {
    assert.equal(vectors.trees.length, 8);
    for (const tree of vectors.trees) {
      const leaves = tree.artifact_ids.map((id) => Buffer.from(id, 'utf8'));
      const n = leaves.length;
      assert.equal(merkleRoot(leaves).toString('hex'), tree.root_hex, `root of ${n}`);
      for (const p of tree.inclusion_proofs) {
        const path = p.path.map((e) => e.hash);
        assert.equal(leafHash(leaves[p.leaf_index] as Buffer).toString('hex'), p.leaf_hash);
        assert.deepEqual(hexes(inclusionProof(leaves, p.leaf_index)), path, `leaf ${p.leaf_index} of ${n}`);
        assert.equal(
          verifyInclusionHash(hex(p.leaf_hash), p.leaf_index, n, path.map(hex), hex(tree.root_hex)),
          true,
        );
      }
      for (const c of tree.consistency_to_this_size) {
        assert.deepEqual(hexes(consistencyProof(leaves, c.old_size)), c.proof, `${c.old_size} -> ${n}`);
        const ok = verifyConsistency(c.old_size, n, hex(c.old_root), hex(tree.root_hex), c.proof.map(hex));
        assert.equal(ok, true, `${c.old_size} -> ${n}`);
      }
    }
  });
});

describe('RFC 9162 Merkle tree: proof properties for sizes 1..64', () => {
  const hashes = LEAVES.slice(0, 64).map((d) => leafHash(d));
  const roots = [...Array(65).keys()].map((n) => REF.mth(0, n));

  it('verifies every inclusion proof and rejects every tampered one', () => {
    const other = leafHash(Buffer.from('not a leaf'));
    for (let n = 1; n <= 64; n++) {
      const root = roots[n] as Buffer;
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(LEAVES.slice(0, n), i);
        const leaf = LEAVES[i] as Buffer;
        const lh = hashes[i] as Buffer;
        const at = `leaf ${i} of ${n}`;
        assert.equal(verifyInclusion(leaf, i, n, proof, root), true, at);
        assert.equal(verifyInclusion(Buffer.concat([leaf, Buffer.from([0])]), i, n, proof, root), false, at);
        if (leaf.length > 0)
          assert.equal(verifyInclusion(flipBit(leaf, i * 5 + n), i, n, proof, root), false, at);
        assert.equal(verifyInclusionHash(flipBit(lh, i + 3 * n), i, n, proof, root), false, at);
        assert.equal(verifyInclusionHash(lh, i, n, proof, flipBit(root, 7 * i + n)), false, at);
        proof.forEach((_, e) => {
          const bad = proof.map((p, j) => (j === e ? flipBit(p, 11 * e + i + n) : p));
          assert.equal(verifyInclusionHash(lh, i, n, bad, root), false, `${at}, element ${e}`);
        });
        for (const index of [i - 1, i + 1, i ^ 2, i ^ 5]) {
          if (index === i) continue;
          assert.equal(verifyInclusionHash(lh, index, n, proof, root), false, `${at} as leaf ${index}`);
        }
        for (const size of [n - 1, n + 1, n + 2, 2 * n]) {
          const holds = inclusionHoldsAs(i, n, i, size);
          assert.equal(verifyInclusionHash(lh, i, size, proof, root), holds, `${at} as size ${size}`);
        }
        assert.equal(verifyInclusionHash(lh, i, n, [...proof, other], root), false, at);
        assert.equal(verifyInclusionHash(lh, i, n, [...proof, root], root), false, at);
        assert.equal(verifyInclusionHash(lh, i, n, [other, ...proof], root), false, at);
        if (proof.length > 0)
          assert.equal(verifyInclusionHash(lh, i, n, proof.slice(0, -1), root), false, at);
        if (proof.length > 0) assert.equal(verifyInclusionHash(lh, i, n, proof.slice(1), root), false, at);
      }
    }
  });

  it('verifies every consistency proof and rejects every tampered one', () => {
    for (let n = 1; n <= 64; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = consistencyProof(LEAVES.slice(0, n), m);
        const oldRoot = roots[m] as Buffer;
        const newRoot = roots[n] as Buffer;
        const at = `${m} -> ${n}`;
        assert.equal(verifyConsistency(m, n, oldRoot, newRoot, proof), true, at);
        assert.equal(verifyConsistency(m, n, flipBit(oldRoot, m + n), newRoot, proof), false, at);
        assert.equal(verifyConsistency(m, n, oldRoot, flipBit(newRoot, 3 * m + n), proof), false, at);
        proof.forEach((_, e) => {
          const bad = proof.map((p, j) => (j === e ? flipBit(p, 13 * e + m + n) : p));
          assert.equal(verifyConsistency(m, n, oldRoot, newRoot, bad), false, `${at}, element ${e}`);
        });
        for (const [a, b] of [
          [m - 1, n],
          [m + 1, n],
          [m, n - 1],
          [m, n + 1],
          [m + 1, n + 1],
          [m, 2 * n],
        ] as const) {
          // Equal sizes need only equal roots, so any equal non-zero sizes hold when m = n.
          const holds = m < n ? consistencyHoldsAs(m, n, a, b) : a === b && a > 0;
          assert.equal(verifyConsistency(a, b, oldRoot, newRoot, proof), holds, `${at} as ${a} -> ${b}`);
        }
        if (m < n) {
          assert.equal(verifyConsistency(m, n, newRoot, oldRoot, proof), false, `${at} swapped roots`);
          assert.equal(verifyConsistency(m, n, oldRoot, newRoot, []), false, `${at} empty proof`);
          assert.equal(verifyConsistency(m, n, oldRoot, newRoot, proof.slice(0, -1)), false, at);
          assert.equal(verifyConsistency(m, n, oldRoot, newRoot, proof.slice(1)), false, at);
        }
        assert.equal(verifyConsistency(m, n, oldRoot, newRoot, [...proof, newRoot]), false, at);
        assert.equal(verifyConsistency(m, n, oldRoot, newRoot, [...proof, oldRoot]), false, at);
        assert.equal(verifyConsistency(m, n, oldRoot, newRoot, [oldRoot, ...proof]), false, at);
      }
    }
  });

  it('treats the empty old tree as consistent with any tree, given the empty-tree root', () => {
    const empty = roots[0] as Buffer;
    assert.deepEqual(consistencyProof(LEAVES.slice(0, 5), 0), []);
    assert.equal(verifyConsistency(0, 5, empty, roots[5] as Buffer, []), true);
    assert.equal(verifyConsistency(0, 0, empty, empty, []), true);
    assert.equal(verifyConsistency(0, 5, roots[1] as Buffer, roots[5] as Buffer, []), false);
    assert.equal(verifyConsistency(0, 5, empty, roots[5] as Buffer, [empty]), false);
  });
});

describe('RFC 9162 Merkle tree: bad arguments and malformed proofs', () => {
  const leaves = LEAVES.slice(0, 5);

  it('throws MerkleError naming the argument for out-of-range indices and sizes', () => {
    const cases: [() => unknown, string][] = [
      [() => inclusionProof(leaves, 5), 'INDEX_OUT_OF_RANGE'],
      [() => inclusionProof([], 0), 'INDEX_OUT_OF_RANGE'],
      [() => inclusionProof(leaves, -1), 'BAD_ARGUMENT'],
      [() => inclusionProof(leaves, 1.5), 'BAD_ARGUMENT'],
      [() => inclusionProof(leaves, Number.NaN), 'BAD_ARGUMENT'],
      [() => consistencyProof(leaves, 6), 'SIZE_OUT_OF_RANGE'],
      [() => consistencyProof(leaves, -1), 'BAD_ARGUMENT'],
      [() => consistencyProof(leaves, 2.5), 'BAD_ARGUMENT'],
      [() => merkleRootFromLeafHashes([Buffer.alloc(31)]), 'BAD_HASH_LENGTH'],
      [() => inclusionProofFromLeafHashes([Buffer.alloc(32), Buffer.alloc(33)], 0), 'BAD_HASH_LENGTH'],
      [() => merkleRoot(['text' as unknown as Uint8Array]), 'BAD_ARGUMENT'],
      [() => leafHash('text' as unknown as Uint8Array), 'BAD_ARGUMENT'],
    ];
    for (const [run, code] of cases) {
      assert.throws(
        run,
        (e: unknown) => e instanceof MerkleError && e instanceof TallyError && e.code === code,
      );
    }
    assert.throws(() => inclusionProof(leaves, 5), /leaf index 5 is outside a tree of 5 leaves/);
  });

  it('returns false, without throwing, for malformed proofs and arguments', () => {
    const root = REF.mth(0, 5);
    const lh = leafHash(LEAVES[2] as Buffer);
    const proof = inclusionProof(leaves, 2);
    const cproof = consistencyProof(leaves, 3);
    const oldRoot = REF.mth(0, 3);
    const bad = (list: unknown) => list as Uint8Array[];
    assert.equal(verifyInclusionHash(lh, 2, 5, proof, root), true);
    assert.equal(verifyInclusionHash(lh, 2, 5, [...proof.slice(0, -1), Buffer.alloc(31)], root), false);
    assert.equal(verifyInclusionHash(lh, 2, 5, [...proof.slice(0, -1), Buffer.alloc(33)], root), false);
    assert.equal(verifyInclusionHash(lh, 2, 5, bad(proof.map((p) => p.toString('hex'))), root), false);
    assert.equal(verifyInclusionHash(lh, 2, 5, bad('proof'), root), false);
    assert.equal(verifyInclusionHash(lh, 2, 5, bad(null), root), false);
    assert.equal(verifyInclusionHash(lh.subarray(1), 2, 5, proof, root), false);
    assert.equal(verifyInclusionHash(lh, 2, 5, proof, root.subarray(1)), false);
    assert.equal(verifyInclusion(bad('leaf') as unknown as Uint8Array, 2, 5, proof, root), false);
    for (const [index, size] of [
      [-1, 5],
      [2.5, 5],
      [Number.NaN, 5],
      [2, Number.POSITIVE_INFINITY],
      [5, 5],
      [0, 0],
      [2, 2 ** 60],
    ]) {
      assert.equal(verifyInclusionHash(lh, index as number, size as number, proof, root), false);
    }
    assert.equal(verifyConsistency(3, 5, oldRoot, root, cproof), true);
    assert.equal(verifyConsistency(5, 3, oldRoot, root, cproof), false);
    assert.equal(verifyConsistency(-3, 5, oldRoot, root, cproof), false);
    assert.equal(verifyConsistency(3, 5.5, oldRoot, root, cproof), false);
    assert.equal(verifyConsistency(3, 5, oldRoot, root, [...cproof.slice(0, -1), Buffer.alloc(31)]), false);
    assert.equal(verifyConsistency(3, 5, oldRoot, root, bad([1, 2, 3])), false);
    assert.equal(verifyConsistency(3, 5, oldRoot.subarray(0, 16), root, cproof), false);
    assert.equal(verifyConsistency(5, 5, root, root, []), true);
    assert.equal(verifyConsistency(5, 5, root, root, [root]), false);
    assert.equal(verifyConsistency(5, 5, root, oldRoot, []), false);
  });

  it('leaves its inputs unchanged and returns proof elements that are independent copies', () => {
    const copy = leaves.map((l) => Buffer.from(l));
    const hashes = leaves.map((l) => leafHash(l));
    const hashCopy = hashes.map((h) => Buffer.from(h));
    merkleRoot(leaves);
    merkleRootFromLeafHashes(hashes);
    const proof = inclusionProofFromLeafHashes(hashes, 4);
    (proof[0] as Buffer).fill(0);
    assert.deepEqual(leaves, copy);
    assert.deepEqual(hashes, hashCopy);
    assert.equal(merkleRootFromLeafHashes(hashes).toString('hex'), REF.mth(0, 5).toString('hex'));
  });
});
