/**
 * Two `tally hub serve` processes on one PostgreSQL database are stateless replicas: a separate
 * load process uploads packages and sends chain heads to both at once; afterwards there is one log
 * with dense indexes and no duplicate, both replicas serve the same checkpoint, and every
 * checkpoint seen during the load is consistent with the final one (RFC 9162 proofs, checked with
 * core/merkle).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { rawPublicKey } from '../../src/core/keys.js';
import { createKey } from '../../src/core/keystore.js';
import { merkleRoot, verifyConsistency } from '../../src/core/merkle.js';
import { openHubStore } from '../../src/hub/store/open.js';
import { openCheckpoint } from '../../src/hub-client/checkpoint.js';
import { hubJson, hubRequest, hubUrl } from '../../src/hub-client/http.js';
import { makeShip, removeShip, type ShipUnderTest, sealPackage } from './hub-fixture.js';
import { createTestDatabase, skipWithoutPostgres, type TestDatabase } from './postgres-db.js';
import { type Served, serveHub } from './serve-process.js';
import { send, signedHeaders } from './signed-send.js';

const LOAD = fileURLToPath(new URL('./programs/load.js', import.meta.url));

describe('two hub replicas on one PostgreSQL', { skip: await skipWithoutPostgres() }, () => {
  let database: TestDatabase;
  let dir: string;
  let replicas: Served[] = [];
  let ship: ShipUnderTest;
  const packages: { session: string; path: string }[] = [];
  before(async () => {
    database = await createTestDatabase('tally_replicas');
    dir = mkdtempSync(join(tmpdir(), 'tally-replicas-'));
    createKey(join(dir, 'shared'), 'hub');
    const keyFile = join(dir, 'shared', 'keys', 'hub.key.json');
    for (const name of ['a', 'b'])
      replicas.push(
        await serveHub(
          ['--db', database.url, '--key', keyFile, '--rate-ip', '100000', '--rate-key', '100000'],
          {
            PATH: process.env.PATH,
            TALLY_HOME: join(dir, name),
          },
        ),
      );
    ship = await makeShip();
    for (let i = 0; i < 6; i++) {
      const pkg = await sealPackage(ship);
      const path = join(dir, `${pkg.session}.tally`);
      writeFileSync(path, pkg.bytes);
      packages.push({ session: pkg.session, path });
    }
  });
  after(async () => {
    for (const r of replicas) r.child.kill('SIGTERM');
    await Promise.all(replicas.map((r) => r.stopped));
    replicas = [];
    removeShip(ship);
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps one consistent log under concurrent uploads to both', async () => {
    assert.equal(replicas[0]!.verifierKey, replicas[1]!.verifierKey);
    const config = {
      urls: replicas.map((r) => r.url),
      keyDir: ship.fx.state,
      packages,
      heads: 120,
      concurrency: 8,
    };
    const { stdout } = await promisify(execFile)(process.execPath, [LOAD, JSON.stringify(config)], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const load = JSON.parse(stdout) as { jobs: number; checkpoints: string[] };
    assert.equal(load.jobs, 126);

    const store = await openHubStore(database.url);
    try {
      const head = await store.logHead();
      assert.equal(head.size, 126);
      const entries = await store.entries(0, head.size);
      assert.deepEqual(
        entries.map((e) => e.index),
        [...Array(126).keys()],
      );
      assert.equal(new Set(entries.map((e) => `${e.entry.kind}/${e.entry.id}/${e.entry.digest}`)).size, 126);
      assert.equal(entries.filter((e) => e.entry.kind === 'package').length, 6);
      assert.deepEqual(head.root, merkleRoot(entries.map((e) => e.bytes)));

      const served = await Promise.all(
        replicas.map(async (r) => (await hubRequest(hubUrl(r.url, '/log/checkpoint'))).body.toString()),
      );
      assert.equal(served[0], served[1], 'both replicas serve the same checkpoint');
      const final = openCheckpoint(served[0]!, replicas[0]!.verifierKey);
      assert.equal(final.size, 126);
      assert.ok(load.checkpoints.length > 10);
      for (const note of load.checkpoints) {
        const seen = openCheckpoint(note, replicas[0]!.verifierKey);
        const url = hubUrl(replicas[1]!.url, `/v1/log/proof/consistency?from=${seen.size}&to=${final.size}`);
        const answer: { json: { proof: string[] } } = await hubJson(url);
        const proof = answer.json.proof.map((p) => Buffer.from(p, 'base64'));
        assert.equal(
          verifyConsistency(seen.size, final.size, seen.root, final.root, proof),
          true,
          `checkpoint of size ${seen.size}`,
        );
      }
      for (const p of packages) assert.ok(await store.package(p.session), p.session);
    } finally {
      await store.close();
    }
  });

  it('refuses at one replica a signed request already received by the other (one nonce cache)', async () => {
    const [a, b] = replicas as [Served, Served];
    const url = hubUrl(a.url, `/v1/ships/${ship.fx.signer.key.shipId}`);
    const body = Buffer.from(
      JSON.stringify({ public_key: rawPublicKey(ship.key.privateKey).toString('base64') }),
    );
    const headers = signedHeaders(url, 'PUT', body, ship.key);
    assert.equal((await send(url, 'PUT', headers, body)).status, 200);
    // The same bytes at the other replica, for the same address (as a load balancer would pass it on).
    const replay = await send(
      hubUrl(b.url, `/v1/ships/${ship.fx.signer.key.shipId}`),
      'PUT',
      { ...headers, host: new URL(a.url).host },
      body,
    );
    assert.deepEqual([replay.status, replay.json.error?.code], [401, 'replayed']);
  });
});
