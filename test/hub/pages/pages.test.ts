/**
 * The hub's pages in a real Chromium against a real hub (SQLite, and PostgreSQL when
 * TALLY_TEST_POSTGRES is set): they render what the packages hold, the receipt panel verifies in
 * the browser — green for a good package, red after its bytes are changed inside the store behind
 * the hub's back, naming the check the CLI verifier names — hostile content stays text, axe-core
 * finds nothing serious, and nothing scrolls sideways on a 375 px phone.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { canonicalize } from '../../../src/core/canonical.js';
import { rawPublicKey } from '../../../src/core/keys.js';
import { issueCertificate } from '../../../src/evidence/certificate.js';
import { verifyPackage } from '../../../src/evidence/package/verify.js';
import { pushCertificate, pushPackage, registerShip } from '../../../src/hub-client/push.js';
import { runSession, toolAfter, toolBefore } from '../../session/fixture.js';
import {
  makeShip,
  removeShip,
  type ShipUnderTest,
  sealPackage,
  startTestHub,
  type TestHub,
  writeSqliteStore,
} from '../hub-fixture.js';
import { createTestDatabase, type TestDatabase } from '../postgres-db.js';
import {
  horizontalOverflow,
  launchChromium,
  mainText,
  panelVerdict,
  screenshot,
  seriousViolations,
  skipWithoutChromium,
} from './browser.js';
import { tamperCorpus } from './tamper-corpus.js';

const HOSTILE = `echo "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>" '"&'`;

/** The first check that failed (not merely skipped): what the page must name. */
function firstFailure(checks: { check: string; ok: boolean; code: string }[]): string | null {
  return checks.find((c) => !c.ok && c.code !== 'skipped')?.check ?? null;
}

const STORES: { name: string; postgres: boolean }[] = [
  { name: 'SQLite', postgres: false },
  ...(process.env.TALLY_TEST_POSTGRES ? [{ name: 'PostgreSQL', postgres: true }] : []),
];

for (const store of STORES) {
  describe(`hub pages on ${store.name}`, { skip: skipWithoutChromium() }, () => {
    let browser: Browser;
    let hub: TestHub;
    let db: TestDatabase | null = null;
    let ship: ShipUnderTest;
    const sessions: Record<string, { session: string; bytes: Buffer }> = {};
    const now = Date.now();

    /** Overwrites a package's bytes in the store itself, as someone with database access could. */
    async function tamperInStore(session: string, bytes: Buffer): Promise<void> {
      if (db === null)
        assert.equal(
          writeSqliteStore(hub, 'UPDATE packages SET bytes = ? WHERE session = ?', bytes, session),
          1,
        );
      else {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          const result = await client.query('UPDATE packages SET bytes = $1 WHERE session = $2', [
            bytes,
            session,
          ]);
          assert.equal(result.rowCount, 1);
        } finally {
          await client.end();
        }
      }
    }

    async function open(path: string, width = 1280): Promise<Page> {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const response = await page.goto(new URL(path, hub.url).toString());
      assert.equal(response?.status(), 200, path);
      return page;
    }

    before(async () => {
      browser = await launchChromium();
      if (store.postgres) db = await createTestDatabase('tally_pages');
      hub = await startTestHub(db ? { db: db.url } : {});
      ship = await makeShip('tally-pages-');
      await registerShip(hub.url, ship.key);
      const window = { validFrom: new Date(now - 3_600_000), validUntil: new Date(now + 3_600_000) };
      const certificates = {
        coder: issueCertificate(
          { name: 'coder', allow: ['*'], model: 'm-big', provider: 'acme', ...window },
          ship.fx.signer.privateKey,
        ),
        strict: issueCertificate(
          { name: 'strict', allow: ['Read', 'Edit'], forbid: ['Bash'], ...window },
          ship.fx.signer.privateKey,
        ),
        old: issueCertificate(
          {
            name: 'old',
            allow: ['Read'],
            validFrom: new Date(now - 7_200_000),
            validUntil: new Date(now - 3_600_000),
          },
          ship.fx.signer.privateKey,
        ),
      };
      for (const c of Object.values(certificates))
        assert.equal((await pushCertificate(hub.url, c.envelope, ship.key)).status, 'created');
      for (const name of ['coder', 'strict'] as const) {
        const certPath = join(ship.fx.dir, `${name}.agent.json`);
        writeFileSync(certPath, canonicalize(certificates[name].envelope));
        const pkg = await sealPackage(ship, { certificatePath: certPath, agent: { name } });
        await pushPackage(hub.url, pkg.session, pkg.bytes, ship.key, {
          certificate: certificates[name].certificate.serial,
        });
        sessions[name] = pkg;
      }
      for (const name of ['flipped', 'merkle', 'swapped', 'other']) {
        sessions[name] = await sealPackage(ship);
        await pushPackage(hub.url, sessions[name].session, sessions[name].bytes, ship.key);
      }
      const hostile = await runSession(ship.fx, [
        toolBefore('h1', 'Bash', { command: HOSTILE }, 'shell'),
        toolAfter('h1', 'Bash', { command: HOSTILE }, 'shell'),
      ]);
      sessions.hostile = { session: hostile.info.id, bytes: hostile.bytes };
      await pushPackage(hub.url, hostile.info.id, hostile.bytes, ship.key);
    });

    after(async () => {
      await browser?.close();
      await hub?.close();
      await db?.drop();
      if (ship) removeShip(ship);
    });

    it("the receipt page shows the session, is self-consistent under the hub's keys, and turns green once the signer key is pinned", async () => {
      const { session, bytes } = sessions.coder!;
      const page = await open(`/receipt/${session}`);
      const verdict = await panelVerdict(page);
      const cli = await verifyPackage(bytes, {
        trusted: [rawPublicKey(ship.fx.signer.privateKey)],
        now: new Date(),
      });
      assert.equal(cli.ok, true);
      // Every check passes under the key the hub serves; the hub also served that key and the
      // script, so the page says no more than "self-consistent" until the reader pins a key.
      assert.equal(verdict.verdict, 'self-consistent', verdict.status);
      // No head of this session was witnessed: witness_consistent passes as information, as in the CLI.
      assert.deepEqual(verdict.checks, [
        ...cli.checks.map((c) => `✓ ${c.check}`),
        '✓ hub_inclusion',
        '✓ witness_consistent',
      ]);
      await page.fill('#pin-key', ship.fx.signer.keyId);
      await page.click('#pin-apply');
      await page.waitForFunction(
        () => document.getElementById('verify')?.dataset.verdict !== 'self-consistent',
      );
      const pinned = await panelVerdict(page);
      assert.equal(pinned.verdict, 'verified', pinned.status);
      assert.deepEqual(pinned.checks, verdict.checks);
      const green = await page.evaluate(() => document.getElementById('verify')?.classList.contains('ok'));
      assert.equal(green, true, 'the panel is green');
      const text = await mainText(page);
      for (const shown of [
        session,
        'src/app.js',
        'modified',
        'README.md',
        'git status --short',
        'coder',
        'hook',
      ])
        assert.ok(text.includes(shown), `the page shows ${shown}`);
      assert.ok((await page.locator('.pill', { hasText: 'provider p-1' }).count()) > 0, 'a provider pill');
      await screenshot(page, `${store.name}-receipt-verified`);
      await page.close();
    });

    it('turns red, naming the failing check, after the bytes are changed inside the store', async () => {
      const key = rawPublicKey(ship.fx.signer.privateKey);
      const corpus = tamperCorpus(sessions.flipped!.bytes, ship.fx.signer.privateKey);
      const cases = [
        { name: 'flipped', bytes: corpus.find((c) => c.name === 'byte flipped in a record payload')!.bytes },
        {
          name: 'merkle',
          bytes: tamperCorpus(sessions.merkle!.bytes, ship.fx.signer.privateKey).find(
            (c) => c.name === 'Merkle root changed',
          )!.bytes,
        },
        // Another genuine package of the same ship: every signature holds, only the log says no.
        { name: 'swapped', bytes: sessions.other!.bytes },
      ];
      for (const { name, bytes } of cases) {
        await tamperInStore(sessions[name]!.session, bytes);
        const cli = await verifyPackage(bytes, { trusted: [key], now: new Date() });
        const expected = firstFailure(cli.checks) ?? 'hub_inclusion';
        const page = await open(`/receipt/${sessions[name]!.session}`);
        const verdict = await panelVerdict(page);
        assert.equal(verdict.verdict, 'failed', `${name}: ${verdict.status}`);
        assert.equal(verdict.failedCheck, expected, name);
        assert.ok(verdict.status.includes(expected), verdict.status);
        await screenshot(page, `${store.name}-receipt-${name}`);
        await page.close();
      }
      assert.equal(
        firstFailure((await verifyPackage(cases[0]!.bytes, { trusted: [key], now: new Date() })).checks),
        'record_signatures',
      );
    });

    it('loads nothing from anywhere but the hub: no font, style sheet, script or CDN elsewhere', async () => {
      for (const path of ['/', `/receipt/${sessions.coder!.session}`, '/agent/coder']) {
        const page = await browser.newPage();
        const requests: string[] = [];
        page.on('request', (request) => requests.push(request.url()));
        await page.goto(new URL(path, hub.url).toString());
        if (path.startsWith('/receipt/')) await panelVerdict(page);
        const origin = new URL(hub.url).origin;
        assert.deepEqual(
          requests.filter((url) => new URL(url).origin !== origin),
          [],
          path,
        );
        if (path.startsWith('/receipt/'))
          assert.ok(requests.some((url) => url.endsWith('/pages/verifier.js')));
        await page.close();
      }
    });

    it('shows hostile package content as text and runs none of it', async () => {
      const page = await open(`/receipt/${sessions.hostile!.session}`);
      const verdict = await panelVerdict(page);
      assert.equal(verdict.verdict, 'self-consistent', verdict.status);
      assert.equal(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned), undefined);
      assert.equal(await page.locator('main img').count(), 0);
      assert.ok((await mainText(page)).includes('<script>window.__pwned=1</script>'));
      await page.close();
    });

    it('the agent page shows the identity card and each receipt with its unauthorized-call verdict', async () => {
      const key = rawPublicKey(ship.fx.signer.privateKey);
      for (const name of ['coder', 'strict'] as const) {
        const page = await open(`/agent/${name}`);
        const text = await mainText(page);
        assert.ok(
          text.includes(ship.fx.signer.key.shipId) && text.includes(ship.fx.signer.keyId),
          'ship and key',
        );
        assert.ok(text.includes('valid now'));
        const envelope = JSON.parse(await (await fetch(new URL(`/v1/agents/${name}`, hub.url))).text()) as {
          certificates: { serial: string }[];
        };
        const serial = envelope.certificates[0]!.serial;
        const cert = (await (await fetch(new URL(`/v1/certificates/${serial}`, hub.url))).json()) as {
          envelope: unknown;
        };
        const cli = await verifyPackage(sessions[name]!.bytes, {
          trusted: [key],
          certificate: cert.envelope,
          now: new Date(),
        });
        const unauthorized = cli.checks.find((c) => c.check === 'unauthorized_calls')!;
        const executed = Number((unauthorized.detail as { executed?: number }).executed ?? 0);
        const badge = unauthorized.ok
          ? '✓ no unauthorized calls'
          : `✗ ${executed} unauthorized call${executed === 1 ? '' : 's'}`;
        assert.ok(text.includes(badge), `${name}: ${badge}`);
        if (name === 'strict') {
          assert.equal(unauthorized.ok, false, 'the strict agent ran a forbidden Bash');
          assert.ok(text.includes('Bash'), 'its forbidden action is listed');
        } else assert.ok(text.includes('model m-big') && text.includes('provider acme'));
        await screenshot(page, `${store.name}-agent-${name}`);
        await page.close();
      }
      const old = await open('/agent/old');
      assert.ok((await mainText(old)).includes('expired'));
      await old.close();
    });

    it('the front page lists receipts and agents, and search finds them', async () => {
      const home = await open('/');
      const text = await mainText(home);
      for (const s of Object.values(sessions)) assert.ok(text.includes(s.session));
      for (const agent of ['coder', 'strict', 'old']) assert.ok(text.includes(agent));
      await home.fill('#q', 'strict');
      await Promise.all([home.waitForURL(/\?q=strict/), home.press('#q', 'Enter')]);
      const found = await mainText(home);
      assert.ok(found.includes(sessions.strict!.session));
      assert.ok(!found.includes(sessions.coder!.session));
      await screenshot(home, `${store.name}-search`);
      await home.close();
    });

    it('has no serious or critical axe-core violations and no horizontal scroll at 375 px', async () => {
      const paths: [string, string][] = [
        ['home', '/'],
        ['receipt-verified', `/receipt/${sessions.coder!.session}`],
        ['receipt-failed', `/receipt/${sessions.flipped!.session}`],
        ['agent-strict', '/agent/strict'],
        ['agent-expired', '/agent/old'],
      ];
      for (const [label, path] of paths) {
        const page = await open(path, 375);
        if (path.startsWith('/receipt/')) await panelVerdict(page);
        assert.deepEqual(await seriousViolations(page), [], path);
        assert.equal(await horizontalOverflow(page), 0, `${path} scrolls sideways at 375 px`);
        await screenshot(page, `${store.name}-phone-${label}`);
        await page.close();
      }
    });
  });
}
