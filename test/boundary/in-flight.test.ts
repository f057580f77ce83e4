/**
 * Many events in flight at once, in two sessions of one process. Oracles: the log format itself
 * (each line the canonical DSSE envelope of its payload, signed by the ship key; seq 0, 1, 2… and
 * each `prev` the SHA-256 of the payload before it) and the records' own promise: every
 * acknowledged record is in the log, at the seq it was acknowledged with; after a failed write
 * (the store failing every write from it on, as its contract says and the file store does), what
 * was acknowledged is exactly the log.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import { verifyEnvelope } from '../../src/core/dsse.js';
import { sha256 } from '../../src/core/hash.js';
import { toPublicKey } from '../../src/core/keys.js';
import { MemoryRecordStore } from '../../src/evidence/log/store.js';
import { RECORD_PAYLOAD_TYPE } from '../../src/evidence/record/record.js';
import { certificateFor, openFixture, signer, toolBefore } from './fixture.js';

const policy = { allow: ['Bash(git status*)'], forbid: ['Bash(rm -rf *)'] };

/** The store's lines checked as the format says; returns each record's seq and call id. */
async function checkedLog(store: MemoryRecordStore): Promise<{ seq: number; id: string }[]> {
  const out: { seq: number; id: string }[] = [];
  let prev: string | null = null;
  for await (const bytes of store.lines()) {
    const line = bytes.toString('utf8');
    const envelope = JSON.parse(line);
    assert.equal(canonicalize(envelope), line, 'the line is the canonical envelope');
    const { payload, payloadType } = verifyEnvelope(envelope, [toPublicKey(signer.privateKey)], {
      strict: true,
    });
    assert.equal(payloadType, RECORD_PAYLOAD_TYPE);
    const record = JSON.parse(payload.toString('utf8'));
    assert.equal(record.seq, out.length, 'in sequence');
    assert.equal(record.prev, prev, `record ${record.seq} links the one before`);
    prev = `sha256:${sha256(payload).toString('hex')}`;
    out.push({ seq: record.seq, id: record.event.call?.id });
  }
  return out;
}

describe('the boundary with many events in flight', () => {
  it('two sessions with many events in flight each get every record, signed, chained, in order', async () => {
    const a = await openFixture(certificateFor(policy), null);
    const b = await openFixture(certificateFor(policy), null);
    try {
      const events = (prefix: string) =>
        Array.from({ length: 60 }, (_, i) =>
          toolBefore('Bash', {
            command: i % 7 === 3 ? `rm -rf /tmp/${prefix}${i}` : `git status # ${prefix}${i}`,
          }),
        );
      const [ea, eb] = [events('a'), events('b')];
      const [da, db] = await Promise.all([
        Promise.all(ea.map((e) => a.boundary.decide(e, { source: 'hook' }))),
        Promise.all(eb.map((e) => b.boundary.decide(e, { source: 'hook' }))),
      ]);
      for (const [f, decided, sent] of [
        [a, da, ea],
        [b, db, eb],
      ] as const) {
        const log = await checkedLog(f.store);
        assert.equal(log.length, sent.length);
        // Each acknowledgement names the record that holds its event, at its place.
        decided.forEach((d, i) => {
          assert.equal(log[d.recorded.seq]?.id, sent[i]!.call.id);
          assert.equal(d.decision, i % 7 === 3 ? 'deny' : 'allow');
        });
        assert.equal(f.boundary.head?.seq, sent.length - 1);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('with a store that fails a write and every one after it (the store contract), what was acknowledged is what the log holds, and the boundary refuses from then on', async () => {
    // A store whose fifth append fails, as a full disk would, and, as the file store does (the
    // store's contract), every append after it: going on would leave a gap in the chain.
    class FailingStore extends MemoryRecordStore {
      calls = 0;
      override async append(lines: readonly Buffer[]): Promise<void> {
        this.calls += 1;
        if (this.calls >= 5) throw new Error('no space left on device');
        return super.append(lines);
      }
    }
    const store = new FailingStore();
    const f = await openFixture(certificateFor(policy), null, { store });
    try {
      const sent = Array.from({ length: 20 }, (_, i) => toolBefore('Bash', { command: `git status # ${i}` }));
      const settled = await Promise.allSettled(sent.map((e) => f.boundary.decide(e, { source: 'hook' })));
      const log = await checkedLog(store);
      // What was acknowledged is exactly what the log holds, an unbroken chain from seq 0: the four
      // records written before the failed one.
      const acked = sent.filter((_, i) => settled[i]!.status === 'fulfilled').map((e) => e.call.id);
      assert.deepEqual(acked.sort(), log.map((r) => r.id).sort());
      assert.equal(log.length, 4);
      // Its head is the last durable record, not the one whose write failed.
      assert.equal(f.boundary.failed, true);
      assert.equal(f.boundary.head?.seq, 3);
      await assert.rejects(
        f.boundary.decide(toolBefore('Bash', { command: 'git status' }), { source: 'hook' }),
      );
      assert.equal((await checkedLog(store)).length, 4);
    } finally {
      await f.close();
    }
  });
});
