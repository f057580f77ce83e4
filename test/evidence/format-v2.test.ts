/**
 * The one format bump: v2 packages, with the Merkle root recomputed from docs/formats.md's words
 * alone (independent code: node:crypto and the RFC 9162 recursion, nothing of Tally's), and v1
 * packages — a real one, committed before the bump — still verifying, reported as v1.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseJson } from '../../src/core/canonical.js';
import { readPublicKeyFile } from '../../src/core/keystore.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { decodeRecordPayload } from '../../src/evidence/record/codec.js';
import { type Fixture, makeFixture, runSession, steppingClock, variedEvents } from '../session/fixture.js';

const FIXTURE = new URL('../../../test/fixtures/v1/', import.meta.url);
const LATER = new Date('2099-01-01T00:00:00Z');

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** RFC 9162 §2.1.1 MTH, written from the RFC: split at the largest power of two below n. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha256(new Uint8Array(0));
  if (leaves.length === 1) return sha256(Buffer.from([0]), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

let fx: Fixture;
let v2: Buffer;

before(async () => {
  fx = await makeFixture();
  v2 = (await runSession(fx, variedEvents(fx.root), { clock: steppingClock('2026-02-01T10:00:00Z') })).bytes;
});
after(() => rmSync(fx.dir, { recursive: true, force: true }));

describe('package format v2', () => {
  it('the Merkle root is RFC 9162 over the 32-byte record digests, as docs/formats.md describes', () => {
    const lines = v2.toString('utf8').split('\n').slice(0, -1);
    const header = JSON.parse(lines[0]!) as { type: string; record_count: number };
    assert.equal(header.type, 'tally/package/v2');
    const records = lines.slice(1, 1 + header.record_count);
    // "the record digest is SHA-256 of the canonical payload bytes"; "leaf data = the 32-byte digest".
    const digests = records.map((l) =>
      sha256(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64')),
    );
    const seal = JSON.parse(lines[1 + header.record_count]!) as {
      type: string;
      merkle: { root: string; size: number };
    };
    assert.equal(seal.type, 'tally/package-seal/v2');
    assert.equal(seal.merkle.size, records.length);
    assert.equal(seal.merkle.root, mth(digests).toString('hex'));
    // And it is not the v1 rule (the digests used as leaf hashes themselves).
    const v1Root = (function fold(hs: Buffer[]): Buffer {
      if (hs.length === 1) return hs[0]!;
      let k = 1;
      while (k * 2 < hs.length) k *= 2;
      return sha256(Buffer.from([1]), fold(hs.slice(0, k)), fold(hs.slice(k)));
    })(digests);
    assert.notEqual(seal.merkle.root, v1Root.toString('hex'));
  });

  it('every record is v2, the receipt is v2, and verification reports format v2', async () => {
    const lines = v2.toString('utf8').split('\n');
    const first = JSON.parse(lines[1]!) as { payload: string };
    assert.equal(decodeRecordPayload(Buffer.from(first.payload, 'base64')).v, 2);
    const result = await verifyPackage(v2, { trusted: [fx.signer.key.publicKey], now: LATER });
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    assert.equal(result.format, 'v2');
    assert.equal(result.receipt?.type, 'tally/receipt/v2');
  });
});

describe('package format v1', () => {
  const bytes = readFileSync(new URL('demo.tally', FIXTURE));
  const key = readPublicKeyFile(new URL('ship.pub.json', FIXTURE).pathname);
  const certificate = parseJson(readFileSync(new URL('coder.agent.json', FIXTURE)));

  it('a v1 package made before the bump still verifies, with its certificate, reported as v1', async () => {
    const result = await verifyPackage(bytes, {
      trusted: [key],
      certificate,
      now: new Date('2026-12-02T00:00:00Z'),
    });
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    assert.equal(result.format, 'v1');
    assert.equal(result.receipt?.type, 'tally/receipt/v1');
  });

  it('a v1 package still fails where it is tampered with', async () => {
    const copy = Buffer.from(bytes);
    const at = copy.indexOf('"payload":"', copy.indexOf(10) + 1) + 30;
    copy[at] = copy[at] === 0x41 ? 0x42 : 0x41;
    const result = await verifyPackage(copy, { trusted: [key], now: new Date('2026-12-02T00:00:00Z') });
    assert.equal(result.ok, false);
    assert.equal(result.checks.find((c) => !c.ok && c.code !== 'skipped')?.check, 'record_signatures');
  });

  it('a v1 header over v2 records is refused as a bad record, not silently mixed', async () => {
    const lines = v2.toString('utf8').split('\n');
    lines[0] = lines[0]!.replace('tally/package/v2', 'tally/package/v1');
    const result = await verifyPackage(Buffer.from(lines.join('\n')), {
      trusted: [fx.signer.key.publicKey],
      now: LATER,
    });
    const failed = result.checks.find((c) => !c.ok && c.code !== 'skipped');
    assert.deepEqual([failed?.check, failed?.code], ['record_format', 'bad-record']);
  });
});
