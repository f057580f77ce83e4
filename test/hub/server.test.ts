/**
 * The hub end to end on a real socket and a real SQLite file: signed pushes of real packages and
 * certificates, verification on arrival (a tampered or foreign-signed package is refused with the
 * check named and nothing stored), identity and id ownership, replay and freshness, limits.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import { digest } from '../../src/core/hash.js';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { followLink, HubClientError, hubJson, hubUrl } from '../../src/hub-client/http.js';
import { pushCertificate, pushPackage, registerShip } from '../../src/hub-client/push.js';
import { jsonOut, runTally } from '../cli/tally-process.js';
import { steppingClock } from '../session/fixture.js';
import {
  makeShip,
  removeShip,
  type ShipUnderTest,
  sealPackage,
  startTestHub,
  type TestHub,
} from './hub-fixture.js';
import { send, signedHeaders } from './signed-send.js';

async function refused(promise: Promise<unknown>): Promise<{ status: number; code: string; check?: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HubClientError, String(error));
    return {
      status: error.status!,
      code: error.body!.error.code,
      ...(error.body!.error.check ? { check: error.body!.error.check } : {}),
    };
  }
  assert.fail('the hub accepted it');
}

function flipInRecord(bytes: Buffer, line: number): Buffer {
  const out = Buffer.from(bytes);
  let start = 0;
  for (let i = 0; i < line; i++) start = out.indexOf(0x0a, start) + 1;
  const sig = out.indexOf('"sig":"', start) + 10;
  out[sig] = out[sig] === 0x41 ? 0x42 : 0x41;
  return out;
}

describe('hub server', () => {
  let hub: TestHub;
  let alice: ShipUnderTest;
  let bob: ShipUnderTest;
  before(async () => {
    hub = await startTestHub();
    alice = await makeShip();
    bob = await makeShip();
  });
  after(async () => {
    await hub.close();
    removeShip(alice);
    removeShip(bob);
  });

  it('registers a ship on first contact, once', async () => {
    assert.equal((await registerShip(hub.url, alice.key)).status, 'created');
    assert.equal((await registerShip(hub.url, alice.key)).status, 'exists');
    await registerShip(hub.url, bob.key);
    const { json } = await hubJson<{ ship_id: string }>(
      hubUrl(hub.url, `/v1/ships/${alice.fx.signer.key.shipId}`),
    );
    assert.equal(json.ship_id, alice.fx.signer.key.shipId);
  });

  it('refuses to register a key the request was not signed with', async () => {
    const url = hubUrl(hub.url, `/v1/ships/${bob.fx.signer.key.shipId}`);
    const body = Buffer.from(JSON.stringify({ public_key: Buffer.alloc(32, 7).toString('base64') }));
    const sent = await send(
      url,
      'PUT',
      signedHeaders(url, 'PUT', body, { keyId: 'key_'.padEnd(36, '0'), privateKey: alice.key.privateKey }),
      body,
    );
    assert.equal(sent.status, 401);
  });

  it('verifies a package on arrival, stores it write-once and logs it', async () => {
    const pkg = await sealPackage(alice);
    const first = await pushPackage(hub.url, pkg.session, pkg.bytes, alice.key);
    assert.equal(first.status, 'created');
    const again = await pushPackage(hub.url, pkg.session, pkg.bytes, alice.key);
    assert.deepEqual([again.status, again.log_index], ['exists', first.log_index]);
    const { json } = await hubJson<{
      digest: string;
      checks: { check: string; ok: boolean }[];
      log_index: number;
    }>(hubUrl(hub.url, `/v1/packages/${pkg.session}`));
    assert.equal(json.digest, digest(pkg.bytes));
    assert.ok(json.checks.find((c) => c.check === 'receipt_recomputed')?.ok);
    const raw = await fetch(hubUrl(hub.url, `/v1/packages/${pkg.session}/raw`));
    assert.deepEqual(Buffer.from(await raw.arrayBuffer()), pkg.bytes);
  });

  it('refuses a tampered package with the failing check named, storing nothing', async () => {
    const pkg = await sealPackage(alice);
    const before = (await hub.store.logHead()).size;
    const result = await refused(pushPackage(hub.url, pkg.session, flipInRecord(pkg.bytes, 2), alice.key));
    assert.deepEqual(result, { status: 422, code: 'verification-failed', check: 'record_signatures' });
    assert.equal(await hub.store.package(pkg.session), null);
    assert.equal((await hub.store.logHead()).size, before);
  });

  it("tolerates an uploader's clock ahead by less than the signature window, not by more", async () => {
    const ahead = (ms: number) => steppingClock(new Date(Date.now() + ms).toISOString(), 10);
    const near = await sealPackage(alice, { clock: ahead(60_000) });
    assert.equal((await pushPackage(hub.url, near.session, near.bytes, alice.key)).status, 'created');
    const far = await sealPackage(alice, { clock: ahead(3_600_000) });
    assert.deepEqual(await refused(pushPackage(hub.url, far.session, far.bytes, alice.key)), {
      status: 422,
      code: 'verification-failed',
      check: 'not_after_now',
    });
  });

  it("refuses a package signed by a key that is not the uploading ship's", async () => {
    const pkg = await sealPackage(bob);
    const result = await refused(pushPackage(hub.url, pkg.session, pkg.bytes, alice.key));
    assert.deepEqual(result, { status: 422, code: 'verification-failed', check: 'signer_pinned' });
  });

  it('gives a session id to the ship that first witnessed it: another ship gets 403', async () => {
    const pkg = await sealPackage(alice);
    // Bob witnesses a head for Alice's session before she uploads: the id is his now.
    const { sendChainHead } = await import('../../src/hub-client/witness.js');
    await sendChainHead(hub.url, bob.key, {
      session: pkg.session,
      seq: 0,
      digest: digest('x'),
      time: new Date().toISOString(),
    });
    assert.deepEqual(await refused(pushPackage(hub.url, pkg.session, pkg.bytes, alice.key)), {
      status: 403,
      code: 'forbidden',
    });
    const mine = await sealPackage(alice);
    await pushPackage(hub.url, mine.session, mine.bytes, alice.key);
    const squat = sendChainHead(hub.url, bob.key, {
      session: mine.session,
      seq: 9,
      digest: digest('y'),
      time: new Date().toISOString(),
    });
    assert.deepEqual(await refused(squat), { status: 403, code: 'forbidden' });
  });

  it('binds an agent slug to the ship that published it first, and indexes packages by it', async () => {
    const now = Date.now();
    const window = { validFrom: new Date(now - 3_600_000), validUntil: new Date(now + 3_600_000) };
    const mine = issueCertificate(
      { name: 'coder', allow: ['*'], ...window, serial: 'cert_alice_1' },
      alice.fx.signer.privateKey,
    );
    const theirs = issueCertificate({ name: 'coder', allow: ['*'], ...window }, bob.fx.signer.privateKey);
    assert.equal((await pushCertificate(hub.url, mine.envelope, alice.key)).status, 'created');
    assert.deepEqual(await refused(pushCertificate(hub.url, theirs.envelope, bob.key)), {
      status: 403,
      code: 'forbidden',
    });
    // A certificate signed by someone else than the uploader is refused as unverifiable.
    assert.equal(
      (await refused(pushCertificate(hub.url, theirs.envelope, alice.key))).check,
      'certificate_signature',
    );
    // Same serial, other bytes: write-once.
    const changed = issueCertificate(
      { name: 'coder', allow: ['Read'], ...window, serial: 'cert_alice_1' },
      alice.fx.signer.privateKey,
    );
    assert.deepEqual(await refused(pushCertificate(hub.url, changed.envelope, alice.key)), {
      status: 409,
      code: 'conflict',
    });

    const certPath = join(alice.fx.dir, 'coder.agent.json');
    writeFileSync(certPath, canonicalize(mine.envelope));
    const pkg = await sealPackage(alice, { certificatePath: certPath, agent: { name: 'coder' } });
    const pushed = await pushPackage(hub.url, pkg.session, pkg.bytes, alice.key, {
      certificate: 'cert_alice_1',
    });
    assert.equal(pushed.status, 'created');
    const { json } = await hubJson<{ items: { session: string }[] }>(
      hubUrl(hub.url, '/v1/packages?agent=coder'),
    );
    assert.deepEqual(
      json.items.map((p) => p.session),
      [pkg.session],
    );
    const agent = await hubJson<{ ship_id: string; certificates: unknown[] }>(
      hubUrl(hub.url, '/v1/agents/coder'),
    );
    assert.equal(agent.json.ship_id, alice.fx.signer.key.shipId);
  });

  it('refuses unsigned, replayed, stale and altered writes', async () => {
    const url = hubUrl(hub.url, `/v1/ships/${alice.fx.signer.key.shipId}`);
    const { rawPublicKey } = await import('../../src/core/keys.js');
    const body = Buffer.from(
      JSON.stringify({ public_key: rawPublicKey(alice.key.privateKey).toString('base64') }),
    );
    const unsigned = await send(url, 'PUT', { 'content-type': 'application/json' }, body);
    assert.deepEqual([unsigned.status, unsigned.json.error?.code], [401, 'unauthenticated']);
    const headers = signedHeaders(url, 'PUT', body, alice.key);
    assert.equal((await send(url, 'PUT', headers, body)).status, 200);
    const replay = await send(url, 'PUT', headers, body);
    assert.deepEqual([replay.status, replay.json.error?.code], [401, 'replayed']);
    const stale = await send(
      url,
      'PUT',
      signedHeaders(url, 'PUT', body, alice.key, { created: Math.floor(Date.now() / 1000) - 3600 }),
      body,
    );
    assert.deepEqual([stale.status, stale.json.error?.code], [401, 'stale-signature']);
    const altered = Buffer.from(body.toString().replace('{"', ' "').replace('"}', '"{'));
    const changed = await send(url, 'PUT', signedHeaders(url, 'PUT', body, alice.key), altered);
    assert.equal(changed.json.error?.code, 'digest-mismatch');
    const uncovered = await send(
      url,
      'PUT',
      signedHeaders(url, 'PUT', body, alice.key, { components: ['@method', '@authority'] }),
      body,
    );
    assert.deepEqual([uncovered.status, uncovered.json.error?.code], [401, 'unauthenticated']);
    // Signed for another address (a request replayed at another hub, or a changed path).
    const elsewhere = signedHeaders(url.replace('127.0.0.1', 'hub.example'), 'PUT', body, alice.key);
    assert.equal((await send(url, 'PUT', elsewhere, body)).json.error?.code, 'bad-signature');
  });

  it('holds the certificate an upload names to its signature: added, changed or uncovered, it is refused', async () => {
    const now = Date.now();
    const window = { validFrom: new Date(now - 3_600_000), validUntil: new Date(now + 3_600_000) };
    const cert = issueCertificate(
      { name: 'signed-coder', allow: ['*'], ...window, serial: 'cert_alice_signed' },
      alice.fx.signer.privateKey,
    );
    assert.equal((await pushCertificate(hub.url, cert.envelope, alice.key)).status, 'created');
    const certPath = join(alice.fx.dir, 'signed-coder.agent.json');
    writeFileSync(certPath, canonicalize(cert.envelope));
    const pkg = await sealPackage(alice, { certificatePath: certPath, agent: { name: 'signed-coder' } });
    const put = hubUrl(hub.url, `/v1/packages/${pkg.session}`);
    const contentType = 'application/vnd.tally.package';
    // Added by someone between the ship and the hub, under a signature that does not cover it.
    const bare = signedHeaders(put, 'PUT', pkg.bytes, alice.key, { contentType });
    const added = await send(put, 'PUT', { ...bare, 'tally-certificate': 'cert_alice_signed' }, pkg.bytes);
    assert.deepEqual([added.status, added.json.error?.code], [401, 'unauthenticated']);
    assert.match(added.json.error?.message ?? '', /tally-certificate/);
    // Signed, then changed.
    const signed = signedHeaders(put, 'PUT', pkg.bytes, alice.key, {
      contentType,
      fields: { 'tally-certificate': 'cert_alice_signed' },
    });
    const changed = await send(put, 'PUT', { ...signed, 'tally-certificate': 'cert_alice_1' }, pkg.bytes);
    assert.deepEqual([changed.status, changed.json.error?.code], [401, 'bad-signature']);
    // Signed, then stripped: the signature names a field the request no longer has.
    const { 'tally-certificate': _, ...stripped } = signed;
    const gone = await send(put, 'PUT', stripped, pkg.bytes);
    assert.equal(gone.status, 401);
    assert.equal((await send(hubUrl(hub.url, `/v1/packages/${pkg.session}`), 'GET', {})).status, 404);
    // As signed, it is taken and listed under the certificate's agent.
    const taken = await send(put, 'PUT', signed, pkg.bytes);
    assert.equal(taken.status, 201, JSON.stringify(taken.json));
    const { json } = await hubJson<{ items: { session: string }[] }>(
      hubUrl(hub.url, '/v1/packages?agent=signed-coder'),
    );
    assert.deepEqual(
      json.items.map((p) => p.session),
      [pkg.session],
    );
  });

  it('refuses deep JSON, oversized bodies and certificates fetched from private addresses', async () => {
    const deep = Buffer.from(`${'['.repeat(100)}${']'.repeat(100)}`);
    const url = hubUrl(hub.url, '/v1/certificates');
    const tooDeep = await send(url, 'POST', signedHeaders(url, 'POST', deep, alice.key), deep);
    assert.deepEqual([tooDeep.status, tooDeep.json.error?.code], [400, 'too-deep']);
    const big = Buffer.alloc(2 * 1024 * 1024, 0x20);
    const tooBig = await send(url, 'POST', signedHeaders(url, 'POST', big, alice.key), big);
    assert.deepEqual([tooBig.status, tooBig.json.error?.code], [413, 'body-too-large']);
    const pkg = await sealPackage(alice);
    const put = hubUrl(hub.url, `/v1/packages/${pkg.session}`);
    const certificateUrl = `${hub.url}v1/certificates/cert_alice_1`;
    const headers = signedHeaders(put, 'PUT', pkg.bytes, alice.key, {
      contentType: 'application/vnd.tally.package',
      fields: { 'tally-certificate-url': certificateUrl },
    });
    const ssrf = await send(put, 'PUT', headers, pkg.bytes);
    assert.deepEqual([ssrf.status, ssrf.json.error?.code], [422, 'fetch-refused']);
    const notFound = await send(hubUrl(hub.url, '/v1/nothing'), 'GET', {});
    assert.deepEqual([notFound.status, notFound.json.error?.code], [404, 'not-found']);
    const wrongMethod = await send(hubUrl(hub.url, '/v1/hub'), 'POST', {});
    assert.deepEqual([wrongMethod.status, wrongMethod.headers.allow], [405, 'GET']);
  });
});

describe('hub rate limits', () => {
  it('refuses the requests of one address past the limit, with Retry-After', async () => {
    const hub = await startTestHub({ limits: { perIp: 5 } });
    try {
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof send>> | undefined;
      for (let i = 0; i < 7; i++) {
        last = await send(hubUrl(hub.url, '/v1/hub'), 'GET', {});
        statuses.push(last.status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
      assert.equal(last!.json.error?.code, 'rate-limited');
      assert.ok(Number(last!.headers['retry-after']) > 0);
    } finally {
      await hub.close();
    }
  });
});

/** Every item of a list, following its `next` links as `tally hub ls --all` does. */
async function listAll(base: string, path: string, id: string): Promise<{ ids: string[]; links: string[] }> {
  const ids: string[] = [];
  const links: string[] = [];
  let url: string | null = hubUrl(base, path);
  while (url) {
    const answer: { json: { items: Record<string, string>[]; next: string | null } } = await hubJson(url);
    const json = answer.json;
    ids.push(...json.items.map((item) => item[id]!));
    if (json.next !== null) links.push(json.next);
    url = json.next === null ? null : followLink(base, json.next).url;
  }
  return { ids, links };
}

describe('hub lists of rows that share a millisecond', () => {
  const frozen = new Date();
  let hub: TestHub;
  const ships: ShipUnderTest[] = [];
  // Slugs that sort differently by bytes and by a locale's collation (case, `-`, `_`, `.`).
  const slugs = ['tie-a', 'tie_b', 'tieC', 'tie.d', 'tiea'];
  const byteOrderDesc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
  before(async () => {
    hub = await startTestHub({ now: () => frozen });
    for (let i = 0; i < 3; i++) {
      const ship = await makeShip();
      ships.push(ship);
      assert.equal((await registerShip(hub.url, ship.key)).status, 'created');
    }
    const window = {
      validFrom: new Date(frozen.getTime() - 3_600_000),
      validUntil: new Date(frozen.getTime() + 3_600_000),
    };
    for (const name of slugs) {
      const cert = issueCertificate({ name, allow: ['*'], ...window }, ships[0]!.fx.signer.privateKey);
      assert.equal((await pushCertificate(hub.url, cert.envelope, ships[0]!.key)).status, 'created');
    }
  });
  after(async () => {
    await hub.close();
    for (const ship of ships) removeShip(ship);
  });

  it('pages agents and ships one at a time, each exactly once, newest first then by id', async () => {
    const agents = await listAll(hub.url, '/v1/agents?limit=1', 'slug');
    assert.deepEqual(agents.ids, [...slugs].sort(byteOrderDesc));
    assert.match(agents.links[0]!, new RegExp(`[?&]before=${frozen.getTime()}%7Etiea(&|$)`));
    // The cursor as a person writes it, `~` not encoded: the rows after tie_b, in the same order.
    const { json } = await hubJson<{ items: { slug: string }[] }>(
      hubUrl(hub.url, `/v1/agents?before=${frozen.getTime()}~tie_b`),
    );
    assert.deepEqual(
      json.items.map((a) => a.slug),
      ['tieC', 'tie.d', 'tie-a'],
    );
    const shipIds = ships.map((s) => s.fx.signer.key.shipId);
    assert.deepEqual(
      (await listAll(hub.url, '/v1/ships?limit=1', 'ship_id')).ids,
      shipIds.sort(byteOrderDesc),
    );
    // Certificates keep their log index cursor.
    const certificates = await listAll(hub.url, '/v1/certificates?limit=2', 'serial');
    assert.equal(certificates.ids.length, slugs.length);
    assert.ok(
      certificates.links.every((link) => /[?&]before=\d+$/.test(link)),
      certificates.links.join(' '),
    );
  });

  it('tally hub ls --all follows the cursor to the end', async () => {
    const ran = await runTally(['hub', 'ls', '--hub', hub.url, 'agents', '--limit', '1', '--all', '--json'], {
      cwd: hub.dir,
      env: { PATH: process.env.PATH, TALLY_HOME: join(hub.dir, 'home') },
    });
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(
      (jsonOut(ran).items as { slug: string }[]).map((a) => a.slug),
      [...slugs].sort(byteOrderDesc),
    );
  });

  it('refuses a malformed cursor with a 400 naming before', async () => {
    for (const [path, shape] of [
      ['/v1/agents?before=12', '<epoch ms>~<id>'],
      ['/v1/agents?before=12~', '<epoch ms>~<id>'],
      ['/v1/ships?before=%7Eship_a', '<epoch ms>~<id>'],
      ['/v1/ships?before=1.5~ship_a', '<epoch ms>~<id>'],
      ['/v1/ships?before=99999999999999999999~ship_a', '<epoch ms>~<id>'],
      ['/v1/certificates?before=12~cert', 'a non-negative integer'],
      ['/v1/packages?before=-1', 'a non-negative integer'],
    ] as const) {
      const answer = await send(hubUrl(hub.url, path), 'GET', {});
      assert.equal(answer.status, 400, path);
      assert.deepEqual(answer.json.error, { code: 'bad-request', message: `before must be ${shape}` }, path);
    }
  });
});
