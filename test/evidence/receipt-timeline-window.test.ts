/**
 * The bounded timeline (docs/receipt.md#timeline): the first 5,000 and the last 5,000 records keep
 * their entries, the run between is named by `timeline_omitted`. Expectations follow from that rule
 * alone; the incremental Merkle root is checked against the RFC 9162 tree in src/core/merkle.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sha256 } from '../../src/core/hash.js';
import { merkleRootFromLeafHashes } from '../../src/core/merkle.js';
import { MerkleAccumulator } from '../../src/evidence/package/merkle-accumulator.js';
import { composeReceipt, ReceiptComposer, receiptBytes } from '../../src/evidence/receipt/receipt.js';
import type { EventRecord } from '../../src/evidence/record/record.js';

const ROOT = 'ab'.repeat(32);

function records(n: number): EventRecord[] {
  return Array.from({ length: n }, (_, seq) => ({
    v: 2,
    seq,
    time: '2026-01-01T00:00:00.000Z',
    session: 'ses_window',
    source: 'hook',
    event: {
      id: `e${seq}`,
      type: seq === 0 ? 'session.start' : 'model.request.before',
      time: '2026-01-01T00:00:00.000Z',
      source: 'urn:t',
    },
    prev: null,
  }));
}

describe('timeline window', () => {
  it('a session of exactly 10,000 records keeps every entry and names no omission', () => {
    const receipt = composeReceipt(records(10_000), ROOT);
    assert.equal(receipt.timeline.length, 10_000);
    assert.equal(receipt.timeline_omitted, undefined);
    assert.ok(!receiptBytes(receipt).toString().includes('timeline_omitted'));
  });

  it('a longer one keeps the first and last 5,000 and names the run between', () => {
    const n = 10_123;
    const receipt = composeReceipt(records(n), ROOT);
    const seqs = receipt.timeline.map((e) => e.seq);
    const expected = [
      ...Array.from({ length: 5000 }, (_, i) => i),
      ...Array.from({ length: 5000 }, (_, i) => n - 5000 + i),
    ];
    assert.deepEqual(seqs, expected);
    assert.deepEqual(receipt.timeline_omitted, { count: 123, first_seq: 5000, last_seq: 5122 });
    assert.equal(receipt.counts.records, n);
  });

  it('the composer fed one record at a time gives composeReceipt’s bytes', () => {
    const list = records(12_345);
    const composer = new ReceiptComposer();
    for (const r of list) composer.add(r);
    assert.ok(receiptBytes(composer.finish(ROOT)).equals(receiptBytes(composeReceipt(list, ROOT))));
  });
});

describe('incremental Merkle root', () => {
  it('equals the RFC 9162 root of the same leaves for every size from 0 to 300', () => {
    const leaves = Array.from({ length: 300 }, (_, i) => sha256(`leaf ${i}`));
    const acc = new MerkleAccumulator();
    assert.ok(acc.root().equals(merkleRootFromLeafHashes([])));
    leaves.forEach((leaf, i) => {
      acc.add(leaf);
      assert.ok(acc.root().equals(merkleRootFromLeafHashes(leaves.slice(0, i + 1))), `size ${i + 1}`);
    });
    assert.equal(acc.size, 300);
  });
});
