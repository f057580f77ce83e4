/**
 * The one contract every HubStore keeps, run against a real SQLite file and a real PostgreSQL
 * database. The log's Merkle arithmetic is checked against core/merkle (itself tested against the
 * RFC 9162 vectors) and the checkpoint against the signed-note verifier.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digest } from '../../src/core/hash.js';
import { generateKeyPair } from '../../src/core/keys.js';
import {
  leafHash,
  merkleRoot,
  merkleRootFromLeafHashes,
  verifyConsistency,
  verifyInclusion,
} from '../../src/core/merkle.js';
import { openNote, parseNoteVerifierKey } from '../../src/core/signed-note.js';
import { parseCheckpoint } from '../../src/core/tlog-tiles.js';
import { hubIdentity } from '../../src/hub/identity.js';
import { TreeReader } from '../../src/hub/log/tree.js';
import type { HubStore, PackageRow, Unlogged } from '../../src/hub/store/hub-store.js';
import { openHubStore } from '../../src/hub/store/open.js';
import { logEntryBytes } from '../../src/hub-client/wire.js';
import { createTestDatabase, skipWithoutPostgres, type TestDatabase } from './postgres-db.js';

const identity = hubIdentity(generateKeyPair().privateKey, 'test.example/log');

function packageRow(
  session: string,
  ship: string,
  bytes: string,
  extra: Partial<PackageRow> = {},
): Unlogged<PackageRow> {
  return {
    session,
    ship_id: ship,
    agent: null,
    certificate: null,
    digest: digest(bytes),
    size: bytes.length,
    record_count: 3,
    merkle_root: '0'.repeat(64),
    started_at: 1_000,
    ended_at: 2_000,
    received_at: Date.now(),
    checks: '[]',
    ...extra,
  };
}

function head(session: string, ship: string, seq: number) {
  return {
    session,
    seq,
    record_digest: digest(`r${seq}`),
    digest: digest(`${session}/${seq}`),
    ship_id: ship,
    time: 1_000 + seq,
    envelope: `{"seq":${seq}}`,
    received_at: Date.now(),
  };
}

function contract(
  name: string,
  open: () => Promise<{ db: string; cleanup: () => Promise<void> }>,
  skip: () => Promise<string | false>,
) {
  describe(`HubStore contract: ${name}`, async () => {
    const skipped = await skip();
    let store: HubStore;
    let where: { db: string; cleanup: () => Promise<void> };
    before(async () => {
      if (skipped) return;
      where = await open();
      store = await openHubStore(where.db);
      await store.open({ origin: identity.origin, publicKey: identity.publicKey }, identity.signCheckpoint);
    });
    after(async () => {
      if (skipped) return;
      await store.close();
      await where.cleanup();
    });

    it('opens an empty log with a signed checkpoint of size 0, and again idempotently', {
      skip: skipped,
    }, async () => {
      const h = await store.logHead();
      assert.equal(h.size, 0);
      const opened = openNote(h.checkpoint, [parseNoteVerifierKey(identity.verifierKey)]);
      assert.equal(parseCheckpoint(opened.text).size, 0);
      const again = await openHubStore(where.db);
      await again.open({ origin: identity.origin, publicKey: identity.publicKey }, identity.signCheckpoint);
      await again.close();
    });

    it('refuses to serve a hub with another key', { skip: skipped }, async () => {
      const other = hubIdentity(generateKeyPair().privateKey, identity.origin);
      const wrong = await openHubStore(where.db);
      await assert.rejects(
        () => wrong.open({ origin: other.origin, publicKey: other.publicKey }, other.signCheckpoint),
        /belongs to a hub/,
      );
      await wrong.close();
    });

    it('registers ships once and counts nonces and rate windows', { skip: skipped }, async () => {
      const row = { ship_id: 'ship_a', key_id: 'key_a', public_key: 'AAAA', registered_at: 5 };
      assert.equal(await store.registerShip(row), 'created');
      assert.equal(await store.registerShip(row), 'exists');
      assert.deepEqual(await store.ship('ship_a'), row);
      assert.equal(await store.ship('ship_none'), null);
      assert.equal(await store.useNonce('key_a', 'n1', Date.now() + 60_000), true);
      assert.equal(await store.useNonce('key_a', 'n1', Date.now() + 60_000), false);
      assert.equal(await store.useNonce('key_b', 'n1', Date.now() + 60_000), true);
      assert.deepEqual(await store.hit(['ip:1'], 100), [1]);
      assert.deepEqual(await store.hit(['ip:1', 'key:a'], 100), [2, 1]);
      assert.deepEqual(await store.hit(['ip:1'], 200), [1]);
    });

    it('stores a package write-once, logs it, and refuses another ship the same session', {
      skip: skipped,
    }, async () => {
      const first = await store.publishPackage(
        packageRow('ses_1', 'ship_a', 'bytes-1'),
        Buffer.from('bytes-1'),
      );
      assert.equal(first.status, 'created');
      assert.equal(typeof first.log_index, 'number');
      assert.deepEqual(
        await store.publishPackage(packageRow('ses_1', 'ship_a', 'bytes-1'), Buffer.from('bytes-1')),
        {
          status: 'exists',
          log_index: first.log_index,
        },
      );
      const conflict = await store.publishPackage(
        packageRow('ses_1', 'ship_a', 'bytes-2'),
        Buffer.from('bytes-2'),
      );
      assert.equal(conflict.status, 'conflict');
      const squat = await store.publishPackage(
        packageRow('ses_1', 'ship_b', 'bytes-1'),
        Buffer.from('bytes-1'),
      );
      assert.deepEqual(squat, { status: 'forbidden', owner: 'ship_a', subject: 'session' });
      assert.equal((await store.packageBytes('ses_1'))?.toString(), 'bytes-1');
      assert.equal((await store.package('ses_1'))?.log_index, first.log_index);
      assert.equal((await store.logHead()).size, 1);
    });

    it('gives a session to the ship that witnessed it first', { skip: skipped }, async () => {
      assert.equal((await store.witnessHead(head('ses_2', 'ship_b', 0))).status, 'created');
      assert.equal((await store.witnessHead(head('ses_2', 'ship_b', 0))).status, 'exists');
      assert.equal(
        (await store.witnessHead({ ...head('ses_2', 'ship_b', 0), digest: digest('other') })).status,
        'conflict',
      );
      assert.equal((await store.witnessHead(head('ses_2', 'ship_a', 1))).status, 'forbidden');
      const taken = await store.publishPackage(packageRow('ses_2', 'ship_a', 'x'), Buffer.from('x'));
      assert.deepEqual(taken, { status: 'forbidden', owner: 'ship_b', subject: 'session' });
      assert.equal((await store.witnessHead(head('ses_2', 'ship_b', 5))).status, 'created');
      assert.deepEqual(
        (await store.heads('ses_2')).map((h) => h.seq),
        [0, 5],
      );
    });

    it('gives an agent slug to the ship that published it first', { skip: skipped }, async () => {
      const cert = (serial: string, ship: string, agent: string) => ({
        serial,
        ship_id: ship,
        agent,
        digest: digest(serial),
        envelope: '{}',
        issued_at: 1,
        valid_from: 1,
        valid_until: 9,
        received_at: 3,
      });
      assert.equal((await store.publishCertificate(cert('cert_1', 'ship_a', 'coder'))).status, 'created');
      assert.equal((await store.publishCertificate(cert('cert_1', 'ship_a', 'coder'))).status, 'exists');
      assert.equal((await store.publishCertificate(cert('cert_2', 'ship_a', 'coder'))).status, 'created');
      assert.deepEqual(await store.publishCertificate(cert('cert_3', 'ship_b', 'coder')), {
        status: 'forbidden',
        owner: 'ship_a',
        subject: 'agent',
      });
      assert.equal((await store.agent('coder'))?.ship_id, 'ship_a');
      const page = await store.certificates({ agent: 'coder', limit: 1 });
      assert.deepEqual(
        page.items.map((c) => c.serial),
        ['cert_2'],
      );
      const rest = await store.certificates({ agent: 'coder', limit: 1, before: page.next! });
      assert.deepEqual(
        rest.items.map((c) => c.serial),
        ['cert_1'],
      );
      assert.equal(rest.next, null);
    });

    it('holds a package indexed under an agent to the slug rule, and to its certificate serial', {
      skip: skipped,
    }, async () => {
      // A package whose certificate came by URL names a slug no certificate on the hub claimed yet:
      // the slug is then its ship's, and another ship's certificate for it is refused.
      const fetched = packageRow('ses_u1', 'ship_b', 'u1', { agent: 'reviewer', certificate: 'cert_b_url' });
      assert.equal((await store.publishPackage(fetched, Buffer.from('u1'))).status, 'created');
      assert.equal((await store.agent('reviewer'))?.ship_id, 'ship_b');
      const late = {
        serial: 'cert_a_reviewer',
        ship_id: 'ship_a',
        agent: 'reviewer',
        digest: digest('cert_a_reviewer'),
        envelope: '{}',
        issued_at: 1,
        valid_from: 1,
        valid_until: 9,
        received_at: 3,
      };
      assert.deepEqual(await store.publishCertificate(late), {
        status: 'forbidden',
        owner: 'ship_b',
        subject: 'agent',
      });
      // A package of one ship is not indexed under another ship's agent; the refusal leaves nothing
      // behind, not even the session's claim.
      const shadow = packageRow('ses_u2', 'ship_b', 'u2', { agent: 'coder', certificate: 'cert_b_coder' });
      assert.deepEqual(await store.publishPackage(shadow, Buffer.from('u2')), {
        status: 'forbidden',
        owner: 'ship_a',
        subject: 'agent',
      });
      assert.equal(await store.package('ses_u2'), null);
      assert.deepEqual(
        (await store.packages({ agent: 'coder', limit: 10 })).items.filter((p) => p.ship_id !== 'ship_a'),
        [],
      );
      const unclaimed = packageRow('ses_u2', 'ship_d', 'u2d');
      assert.equal((await store.publishPackage(unclaimed, Buffer.from('u2d'))).status, 'created');
      // Nor does it name a serial that is another ship's certificate on the hub.
      const borrowed = packageRow('ses_u3', 'ship_b', 'u3', { agent: 'reviewer', certificate: 'cert_1' });
      assert.deepEqual(await store.publishPackage(borrowed, Buffer.from('u3')), {
        status: 'forbidden',
        owner: 'ship_a',
        subject: 'certificate',
      });
      assert.equal(await store.package('ses_u3'), null);
    });

    it('lists packages newest first with filters by ship, agent and time', { skip: skipped }, async () => {
      for (let i = 0; i < 5; i++)
        await store.publishPackage(
          packageRow(`ses_l${i}`, i % 2 ? 'ship_a' : 'ship_c', `l${i}`, {
            agent: i % 2 ? 'coder' : null,
            started_at: 10_000 + i,
          }),
          Buffer.from(`l${i}`),
        );
      const byShip = await store.packages({ ship: 'ship_c', limit: 10 });
      assert.deepEqual(
        byShip.items.map((p) => p.session),
        ['ses_l4', 'ses_l2', 'ses_l0'],
      );
      const byAgent = await store.packages({ agent: 'coder', limit: 10 });
      assert.deepEqual(
        byAgent.items.map((p) => p.session),
        ['ses_l3', 'ses_l1'],
      );
      const window = await store.packages({ since: 10_001, until: 10_003, limit: 10 });
      assert.deepEqual(
        window.items.map((p) => p.session),
        ['ses_l2', 'ses_l1'],
      );
      const paged = await store.packages({ limit: 2 });
      assert.equal(paged.items.length, 2);
      assert.notEqual(paged.next, null);
    });

    it('pages agents and ships that share a millisecond exactly once, newest first then by id', {
      skip: skipped,
    }, async () => {
      // Ids that sort differently by bytes and by a locale's collation (case, `-`, `_`, `.`).
      const ids = ['tie-a', 'tie_b', 'tieC', 'tie.d', 'tiea'];
      const byteOrderDesc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
      const firstSeen: [string, number][] = [
        ['tie-late', 7_001],
        ...ids.map((id) => [id, 7_000] as [string, number]),
        ['tie-early', 6_999],
      ];
      for (const [id, at] of firstSeen)
        await store.publishCertificate({
          serial: `cert_${id}`,
          ship_id: 'ship_t',
          agent: id,
          digest: digest(id),
          envelope: '{}',
          issued_at: 1,
          valid_from: 1,
          valid_until: 9,
          received_at: at,
        });
      const window = { since: 6_999, until: 7_002 };
      const agents: string[] = [];
      for (let page = await store.agents({ ...window, limit: 1 }); ; ) {
        agents.push(...page.items.map((a) => a.slug));
        if (page.next === null) break;
        page = await store.agents({ ...window, limit: 1, before: page.next });
      }
      assert.deepEqual(agents, ['tie-late', ...[...ids].sort(byteOrderDesc), 'tie-early']);

      const shipIds = ids.map((id) => `ship_${id}`);
      for (const id of shipIds)
        await store.registerShip({
          ship_id: id,
          key_id: `key_${id}`,
          public_key: 'AAAA',
          registered_at: 8_000,
        });
      const ships: string[] = [];
      for (let page = await store.ships({ limit: 1 }); ; ) {
        ships.push(...page.items.map((s) => s.ship_id));
        if (page.next === null) break;
        page = await store.ships({ limit: 1, before: page.next });
      }
      const all = (await store.ships({ limit: 500 })).items.map((s) => s.ship_id);
      assert.deepEqual(ships, all);
      assert.deepEqual(
        ships.filter((id) => shipIds.includes(id)),
        [...shipIds].sort(byteOrderDesc),
      );
    });

    it('keeps one dense log under concurrent writes, over a tile boundary', { skip: skipped }, async () => {
      const writes = [];
      for (let i = 0; i < 300; i++) writes.push(store.witnessHead(head(`ses_c${i % 7}`, 'ship_c', i)));
      const results = await Promise.all(writes);
      assert.ok(results.every((r) => r.status === 'created'));
      const { size, root, checkpoint } = await store.logHead();
      const entries = await store.entries(0, size);
      assert.deepEqual(
        entries.map((e) => e.index),
        [...Array(size).keys()],
      );
      for (const e of entries) assert.deepEqual(logEntryBytes(e.entry), e.bytes);
      const leaves = entries.map((e) => e.bytes);
      assert.deepEqual(root, merkleRoot(leaves));
      const text = openNote(checkpoint, [parseNoteVerifierKey(identity.verifierKey)]).text;
      assert.equal(parseCheckpoint(text).size, size);
      assert.deepEqual(parseCheckpoint(text).root, root);
      // Tiles: level 0 holds leaf hashes, level 1 the root of each full level-0 tile.
      const tile0 = await store.tile(0, 0);
      assert.equal(tile0.length, 256 * 32);
      assert.deepEqual(tile0.subarray(0, 32), leafHash(leaves[0]!));
      assert.deepEqual(
        await store.tile(1, 0),
        merkleRootFromLeafHashes(leaves.slice(0, 256).map((l) => leafHash(l))),
      );
      assert.equal((await store.tile(0, 1)).length, (size - 256) * 32);
      // Proofs read from the tiles verify with the independent core verifier.
      const tree = new TreeReader((l, i) => store.tile(l, i), size);
      for (const index of [0, 1, 255, 256, size - 1]) {
        const proof = await tree.inclusionProof(index);
        assert.equal(
          verifyInclusion(leaves[index]!, index, size, proof, root),
          true,
          `inclusion of ${index}`,
        );
      }
      for (const from of [1, 7, 256, 257, size - 1]) {
        const proof = await tree.consistencyProof(from);
        assert.equal(
          verifyConsistency(from, size, merkleRoot(leaves.slice(0, from)), root, proof),
          true,
          `consistency from ${from}`,
        );
      }
    });
  });
}

contract(
  'SQLite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-hub-store-'));
    return { db: join(dir, 'hub.db'), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  async () => false,
);

contract(
  'PostgreSQL',
  async () => {
    const database: TestDatabase = await createTestDatabase();
    return { db: database.url, cleanup: database.drop };
  },
  skipWithoutPostgres,
);
