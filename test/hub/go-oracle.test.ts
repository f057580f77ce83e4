/**
 * An outside reader proves the log: Go's golang.org/x/mod/sumdb/note verifies the served
 * checkpoint with the hub's verifier key, and sumdb/tlog reads the tree through the served tiles
 * (checking each against the signed root) to prove an entry's inclusion and an older size's
 * consistency. Its proofs must equal the hub's own JSON proofs hash for hash. Built offline from
 * Debian's golang-golang-x-mod-dev sources (GOPATH mode, no module download).
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { digest } from '../../src/core/hash.js';
import { merkleRoot } from '../../src/core/merkle.js';
import { hubUrl } from '../../src/hub-client/http.js';
import { registerShip } from '../../src/hub-client/push.js';
import { logEntryBytes } from '../../src/hub-client/wire.js';
import { sendChainHead } from '../../src/hub-client/witness.js';
import { makeShip, removeShip, type ShipUnderTest, startTestHub, type TestHub } from './hub-fixture.js';

const GO_SOURCES = '/usr/share/gocode';
const PROGRAM = resolve('test/hub/oracle/main.go');

function goMissing(): string | false {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    return process.env.CI ? false : 'go is not installed (apt-get install golang-go golang-golang-x-mod-dev)';
  }
  if (!existsSync(join(GO_SOURCES, 'src/golang.org/x/mod/sumdb/tlog')))
    return process.env.CI
      ? false
      : `no golang.org/x/mod sources under ${GO_SOURCES} (apt-get install golang-golang-x-mod-dev)`;
  return false;
}

describe('Go sumdb/note + sumdb/tlog as an outside reader', { skip: goMissing() }, () => {
  let hub: TestHub;
  let ship: ShipUnderTest;
  let binary: string;
  let build: string;
  before(async () => {
    build = mkdtempSync(join(tmpdir(), 'tally-go-oracle-'));
    binary = join(build, 'oracle');
    const env = {
      ...process.env,
      GO111MODULE: 'off',
      GOPATH: GO_SOURCES,
      GOPROXY: 'off',
      GOFLAGS: '',
      GOCACHE: join(build, 'cache'),
    };
    execFileSync('go', ['build', '-o', binary, PROGRAM], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    hub = await startTestHub();
    ship = await makeShip();
    await registerShip(hub.url, ship.key);
    // More than one full tile, so level-1 tiles are read too.
    for (let i = 0; i < 300; i++)
      await sendChainHead(hub.url, ship.key, {
        session: `ses_oracle_${i % 3}`,
        seq: i,
        digest: digest(`r${i}`),
        time: new Date().toISOString(),
      });
  });
  after(async () => {
    await hub?.close();
    if (ship) removeShip(ship);
    rmSync(build, { recursive: true, force: true });
  });

  async function oracle(index: number, entry: Buffer, oldSize: number) {
    const { stdout } = await promisify(execFile)(binary, [
      hub.url,
      hub.identity.verifierKey,
      String(index),
      entry.toString('hex'),
      String(oldSize),
    ]);
    return JSON.parse(stdout) as {
      size: number;
      root: string;
      record_proof: string[];
      old_root: string;
      tree_proof: string[];
    };
  }

  it('verifies the checkpoint and proves entries against the served tiles, as the hub does', async () => {
    const entries = await hub.store.entries(0, 300);
    for (const [index, oldSize] of [
      [0, 1],
      [255, 200],
      [256, 256],
      [299, 257],
    ] as const) {
      const entry = logEntryBytes(entries[index]!.entry);
      const go = await oracle(index, entry, oldSize);
      assert.equal(go.size, 300);
      assert.equal(go.root, merkleRoot(entries.map((e) => e.bytes)).toString('base64'));
      const ours = (await (
        await fetch(hubUrl(hub.url, `/v1/log/proof/inclusion?index=${index}&size=300`))
      ).json()) as { proof: string[] };
      assert.deepEqual(go.record_proof, ours.proof, `inclusion proof of ${index}`);
      const consistency = (await (
        await fetch(hubUrl(hub.url, `/v1/log/proof/consistency?from=${oldSize}&to=300`))
      ).json()) as {
        proof: string[];
      };
      assert.deepEqual(go.tree_proof, consistency.proof, `consistency proof from ${oldSize}`);
      assert.equal(go.old_root, merkleRoot(entries.slice(0, oldSize).map((e) => e.bytes)).toString('base64'));
    }
  });

  it('fails for an entry the log does not hold, and for another key', async () => {
    const entries = await hub.store.entries(5, 6);
    const wrong = Buffer.from(logEntryBytes({ ...entries[0]!.entry, digest: digest('not it') }));
    await assert.rejects(() => oracle(5, wrong, 1), /check record/);
    const { hubIdentity } = await import('../../src/hub/identity.js');
    const { generateKeyPair } = await import('../../src/core/keys.js');
    const stranger = hubIdentity(generateKeyPair().privateKey, hub.identity.origin).verifierKey;
    await assert.rejects(
      () =>
        promisify(execFile)(binary, [
          hub.url,
          stranger,
          '5',
          logEntryBytes(entries[0]!.entry).toString('hex'),
          '1',
        ]),
      /checkpoint note/,
    );
  });
});
