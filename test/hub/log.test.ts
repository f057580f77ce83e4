/**
 * The transparency log as a client sees it: C2SP resources, hub_inclusion and witness_consistent
 * against a live hub, and `tally hub audit`'s consistency checking with a forked checkpoint.
 * Oracles: core/merkle (RFC 9162 vectors), the signed-note verifier, and the package's own bytes.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digest } from '../../src/core/hash.js';
import { generateKeyPair } from '../../src/core/keys.js';
import { leafHash, merkleRoot } from '../../src/core/merkle.js';
import { noteVerifierKey } from '../../src/core/signed-note.js';
import { parseEntryBundle } from '../../src/core/tlog-tiles.js';
import { hubIdentity } from '../../src/hub/identity.js';
import { auditDir, auditHub } from '../../src/hub-client/audit.js';
import { fetchCheckpoint } from '../../src/hub-client/checkpoint.js';
import { hubUrl } from '../../src/hub-client/http.js';
import { pushPackage, registerShip } from '../../src/hub-client/push.js';
import { hubChecks, hubInclusion, hubWitnessConsistency } from '../../src/hub-client/verify-hub.js';
import { createWitness, sendChainHead } from '../../src/hub-client/witness.js';
import { witnessConsistency } from '../../src/hub-client/witness-check.js';
import {
  makeShip,
  recordDigests,
  removeShip,
  type ShipUnderTest,
  sealPackage,
  startTestHub,
  type TestHub,
} from './hub-fixture.js';

async function bytesAt(url: string): Promise<Buffer> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return Buffer.from(await response.arrayBuffer());
}

describe('transparency log and live witness', () => {
  let hub: TestHub;
  let ship: ShipUnderTest;
  let home: string;
  before(async () => {
    hub = await startTestHub();
    ship = await makeShip();
    home = mkdtempSync(join(tmpdir(), 'tally-audit-'));
    await registerShip(hub.url, ship.key);
  });
  after(async () => {
    await hub.close();
    removeShip(ship);
    rmSync(home, { recursive: true, force: true });
  });

  it('proves a pushed package is in the log, and nothing else', async () => {
    const pkg = await sealPackage(ship);
    const options = { hub: hub.url, hubKey: hub.identity.verifierKey };
    assert.equal((await hubInclusion(pkg.bytes, options)).code, 'not-on-hub');
    await pushPackage(hub.url, pkg.session, pkg.bytes, ship.key);
    const ok = await hubInclusion(pkg.bytes, options);
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(ok.code, 'ok');
    // Other bytes under the same session id: the rebuilt entry is not in the tree.
    const altered = Buffer.from(pkg.bytes);
    altered.writeUInt8(altered.readUInt8(altered.length - 3) ^ 1, altered.length - 3);
    assert.equal((await hubInclusion(altered, options)).code, 'not-included');
    const stranger = noteVerifierKey(hub.identity.origin, generateKeyPair().publicKey);
    assert.equal(
      (await hubInclusion(pkg.bytes, { hub: hub.url, hubKey: stranger })).code,
      'untrusted-checkpoint',
    );
  });

  it('checks the package extends every head witnessed while it ran', async () => {
    const pkg = await sealPackage(ship);
    const digests = recordDigests(pkg.bytes);
    for (const seq of [0, 2, 4])
      await sendChainHead(hub.url, ship.key, {
        session: pkg.session,
        seq,
        digest: digests[seq]!,
        time: new Date().toISOString(),
      });
    await pushPackage(hub.url, pkg.session, pkg.bytes, ship.key);
    const options = {
      hub: hub.url,
      hubKey: hub.identity.verifierKey,
      trusted: [ship.fx.signer.key.publicKey],
    };
    const check = await hubWitnessConsistency(pkg.bytes, options);
    assert.deepEqual([check.ok, check.code, check.detail.heads], [true, 'ok', 3]);

    // A head the package does not extend (the record at seq 3 was rewritten after it was witnessed).
    const other = await sealPackage(ship);
    await sendChainHead(hub.url, ship.key, {
      session: other.session,
      seq: 3,
      digest: digest('rewritten'),
      time: new Date().toISOString(),
    });
    const mismatch = await hubWitnessConsistency(other.bytes, options);
    assert.deepEqual([mismatch.ok, mismatch.code, mismatch.detail.seq], [false, 'witness-mismatch', 3]);
    // Heads signed by a key the verifier does not pin are not evidence.
    const unpinned = await hubWitnessConsistency(pkg.bytes, {
      ...options,
      trusted: [generateKeyPair().publicKey],
    });
    assert.equal(unpinned.ok, false);
  });

  it('the recorder witness sends the first head, every n-th, and the last on flush', async () => {
    const pkg = await sealPackage(ship);
    const digests = recordDigests(pkg.bytes);
    const witness = createWitness({ hub: hub.url, signer: ship.key, session: pkg.session, every: 3 });
    for (const [seq, d] of digests.entries()) witness.record(seq, d, new Date());
    assert.deepEqual(await witness.flush(), []);
    const heads = (await (await fetch(hubUrl(hub.url, `/v1/sessions/${pkg.session}/heads`))).json()) as {
      heads: { seq: number }[];
    };
    const last = digests.length - 1;
    const expected = [...new Set([...digests.keys()].filter((seq) => seq % 3 === 0).concat(last))];
    assert.deepEqual(
      heads.heads.map((h) => h.seq),
      expected,
    );
    await pushPackage(hub.url, pkg.session, pkg.bytes, ship.key);
    const [inclusion, consistent] = await hubChecks(pkg.bytes, {
      hub: hub.url,
      hubKey: hub.identity.verifierKey,
      trusted: [ship.fx.signer.key.publicKey],
    });
    assert.deepEqual(
      [inclusion.code, consistent.code, consistent.detail.heads],
      ['ok', 'ok', expected.length],
    );
  });

  it('witnessConsistency: records dropped after a head was witnessed are caught', () => {
    const fake = [
      '{"header":1}',
      ...['a', 'b', 'c'].map((p) => JSON.stringify({ payload: Buffer.from(p).toString('base64') })),
      '{"seal":1}',
    ].join('\n');
    const bytes = Buffer.from(`${fake}\n`);
    assert.equal(witnessConsistency(bytes, [{ seq: 1, digest: digest('b') }]).code, 'ok');
    assert.equal(witnessConsistency(bytes, [{ seq: 1, digest: digest('x') }]).code, 'witness-mismatch');
    assert.equal(witnessConsistency(bytes, [{ seq: 3, digest: digest('d') }]).code, 'witness-beyond-end');
    assert.equal(witnessConsistency(bytes, []).code, 'info');
  });

  it('serves the C2SP checkpoint, tiles and entry bundles the log is made of', async () => {
    const checkpoint = await fetchCheckpoint(hub.url, hub.identity.verifierKey);
    const size = checkpoint.size;
    assert.ok(size > 0 && size < 256);
    const tile = await bytesAt(hubUrl(hub.url, `/log/tile/0/000.p/${size}`));
    const bundle = parseEntryBundle(await bytesAt(hubUrl(hub.url, `/log/tile/entries/000.p/${size}`)));
    assert.equal(bundle.length, size);
    assert.deepEqual(tile, Buffer.concat(bundle.map((e) => leafHash(e))));
    assert.deepEqual(merkleRoot(bundle), checkpoint.root);
    assert.equal((await fetch(hubUrl(hub.url, `/log/tile/0/000.p/${size + 1}`))).status, 404);
    assert.equal((await fetch(hubUrl(hub.url, '/log/tile/0/000'))).status, 404);
    assert.equal((await fetch(hubUrl(hub.url, '/log/tile/0/x000/001'))).status, 404);
    const entry = (await (await fetch(hubUrl(hub.url, '/v1/log/entries/0'))).json()) as {
      bytes: string;
      entry: { type: string };
    };
    assert.deepEqual(Buffer.from(entry.bytes, 'base64'), bundle[0]);
    assert.equal(entry.entry.type, 'tally/tlog-entry/v1');
  });

  it('audits: first use recorded, then consistency proven, and a fork reported', async () => {
    const first = await auditHub(hub.url, { home });
    assert.deepEqual([first.trust, first.consistent, first.previous], ['first-use', true, null]);
    const pkg = await sealPackage(ship);
    await pushPackage(hub.url, pkg.session, pkg.bytes, ship.key);
    const second = await auditHub(hub.url, { home });
    assert.deepEqual(
      [second.trust, second.consistent, second.previous?.size],
      ['recorded', true, first.size],
    );
    assert.equal(second.size, first.size + 1);
    // A checkpoint of the same size with another root, signed by the hub key: a forked log.
    const dir = join(auditDir(home, hub.url), 'checkpoints');
    writeFileSync(
      join(dir, `${second.size}.checkpoint`),
      hub.identity.signCheckpoint(second.size, randomBytes(32)),
    );
    const forked = await auditHub(hub.url, { home });
    assert.equal(forked.consistent, false);
    assert.ok(readdirSync(auditDir(home, hub.url)).some((f) => f.startsWith('inconsistent-')));
    // A pinned key other than the one recorded is refused.
    const other = hubIdentity(generateKeyPair().privateKey, hub.identity.origin);
    await assert.rejects(
      () => auditHub(hub.url, { home, hubKey: other.verifierKey }),
      /differs from the key recorded/,
    );
  });
});
