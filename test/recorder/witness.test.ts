/**
 * The recorder's live witness against a real hub on 127.0.0.1: a session started with a witness
 * sends its first head, every n-th and the last (session.end) at close; the sealed package then
 * passes hub_inclusion and witness_consistent, and a hub that is down costs the session nothing
 * (the failures are reported, every record is still sealed).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eventId, TALLY_SOURCE_URI } from '../../src/boundary/prepare.js';
import { digest } from '../../src/core/hash.js';
import { generateKeyPair, keyId } from '../../src/core/keys.js';
import { hubUrl } from '../../src/hub-client/http.js';
import { pushPackage } from '../../src/hub-client/push.js';
import { hubChecks } from '../../src/hub-client/verify-hub.js';
import { createWitness } from '../../src/hub-client/witness.js';
import { SessionRegistry } from '../../src/recorder/registry.js';
import { defaultTrustedKeys, loadShipSigner } from '../../src/session/identity.js';
import { places } from '../../src/session/paths.js';
import { makeProject, type Project } from '../cli/tally-process.js';
import { recordDigests, startTestHub, type TestHub } from '../hub/hub-fixture.js';

async function noteEvents(registry: SessionRegistry, session: string, n: number): Promise<void> {
  const held = registry.get(session)!;
  for (let i = 0; i < n; i++)
    await held.open.boundary.note({
      source: 'cli',
      event: {
        id: eventId(),
        type: 'notification',
        time: new Date().toISOString(),
        source: TALLY_SOURCE_URI,
        session: { id: session },
        message: `step ${i}`,
      },
    });
}

describe('recorder live witness', () => {
  let hub: TestHub;
  let p: Project;
  const logs: string[] = [];
  const registry = () =>
    new SessionRegistry(p.env, undefined, (level, message) => logs.push(`${level}: ${message}`));

  before(async () => {
    hub = await startTestHub();
    p = makeProject('tally-witness-');
    assert.equal((await p.tally(['init'])).code, 0);
  });
  after(async () => {
    await hub.close();
  });

  it('sends the first head, every n-th and session.end; the package passes both hub checks', async () => {
    const r = registry();
    const held = await r.start({ cwd: p.root, witness: { hub: hub.url, every: 4 } });
    await noteEvents(r, held.id, 9);
    const closed = await r.close(held.id);
    assert.deepEqual(closed.witness, { sent_to_last: closed.records - 1, failures: [] });
    const bytes = readFileSync(closed.packagePath);
    const digests = recordDigests(bytes);
    const served = (await (await fetch(hubUrl(hub.url, `/v1/sessions/${held.id}/heads`))).json()) as {
      heads: { seq: number; digest: string }[];
    };
    const last = digests.length - 1;
    // seq 0 (session.start), then every 4th after the last one sent, then session.end.
    assert.deepEqual(
      served.heads.map((h) => h.seq),
      [0, 4, 8, last],
    );
    for (const head of served.heads) assert.equal(head.digest, digests[head.seq]);
    const where = places(p.root, p.env);
    const signer = await loadShipSigner(where, async () => undefined);
    await pushPackage(hub.url, held.id, bytes, { keyId: signer.keyId, privateKey: signer.privateKey });
    const [inclusion, consistent] = await hubChecks(bytes, {
      hub: hub.url,
      hubKey: hub.identity.verifierKey,
      trusted: defaultTrustedKeys(where).map((k) => k.publicKey),
    });
    assert.deepEqual([inclusion.code, consistent.code, consistent.detail.heads], ['ok', 'ok', 4]);
  });

  it('a recorder restarted mid-session keeps witnessing the session (the hub is kept with it)', async () => {
    const first = registry();
    const held = await first.start({ cwd: p.root, witness: { hub: hub.url, every: 100 } });
    await noteEvents(first, held.id, 2);
    await first.releaseAll(); // the recorder is gone; the session stays open on disk
    const second = registry();
    await second.forEvent({ harnessSession: 'h-restart', cwd: p.root }, { session: held.id });
    await noteEvents(second, held.id, 2);
    const closed = await second.close(held.id);
    assert.deepEqual(closed.witness?.failures, []);
    const served = (await (await fetch(hubUrl(hub.url, `/v1/sessions/${held.id}/heads`))).json()) as {
      heads: { seq: number }[];
    };
    // seq 0 from the first recorder; the second's first record and session.end from the second.
    assert.deepEqual(
      served.heads.map((h) => h.seq),
      [0, 3, closed.records - 1],
    );
  });

  it('a hub that is down: every record is sealed and the failures are said', async () => {
    const r = registry();
    const held = await r.start({ cwd: p.root, witness: { hub: 'http://127.0.0.1:9/', every: 2 } });
    await noteEvents(r, held.id, 3);
    const closed = await r.close(held.id);
    assert.equal(closed.records, 6); // start, 3 events, the reconcile summary, end
    assert.ok(closed.witness && closed.witness.failures.length >= 1, JSON.stringify(closed.witness));
    assert.ok(logs.some((l) => l.startsWith('warn: witness:')));
  });

  it('a hub that never answers: flush gives up at its deadline and says how many heads were unsent', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent: Server = createServer(() => {});
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { privateKey, publicKey } = generateKeyPair();
      const witness = createWitness({
        hub: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`,
        signer: { keyId: keyId(publicKey), privateKey },
        session: 'ses_silent',
        every: 1,
      });
      for (let seq = 0; seq < 3; seq++) witness.record(seq, digest(`r${seq}`), new Date());
      const failures = await witness.flush(200);
      assert.match(failures.at(-1)?.message ?? '', /^3 heads were still unsent after 200 ms$/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
