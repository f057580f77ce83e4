/**
 * `tally receipt render` in a real Chromium: the file opens with no network request at all,
 * checks itself, says "self-consistent" under the key it names and "verified" only once the viewer
 * pins the signer's key (a pasted key id or a dropped public key file), red for another key or a
 * tampered package. The browser verifier's verdict on the tamper corpus equals the CLI's here too.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { generateKeyPair, keyId, rawPublicKey } from '../../../src/core/keys.js';
import { keyPaths } from '../../../src/core/keystore.js';
import { verifyPackage } from '../../../src/evidence/package/verify.js';
import { makeShip, removeShip, type ShipUnderTest, sealPackage } from '../hub-fixture.js';
import {
  horizontalOverflow,
  launchChromium,
  mainText,
  panelVerdict,
  screenshot,
  seriousViolations,
  skipWithoutChromium,
} from './browser.js';
import { BUNDLE, tamperCorpus, verdictOf } from './tamper-corpus.js';

const TALLY = resolve('bin', 'tally.js');

describe('offline receipt page', { skip: skipWithoutChromium() }, () => {
  let browser: Browser;
  let ship: ShipUnderTest;
  let dir: string;
  let good: Buffer;

  function render(bytes: Buffer, name: string): string {
    const pkg = join(dir, `${name}.tally`);
    const out = join(dir, `${name}.html`);
    writeFileSync(pkg, bytes);
    const json = execFileSync(process.execPath, [TALLY, 'receipt', 'render', pkg, '-o', out, '--json'], {
      encoding: 'utf8',
    });
    assert.equal((JSON.parse(json) as { path: string }).path, out);
    return out;
  }

  /** Opens the file with every request recorded and every network request refused. */
  async function open(file: string, width = 1280): Promise<{ page: Page; requests: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const requests: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      return route.abort();
    });
    const page = await context.newPage();
    page.on('request', (request) => requests.push(request.url()));
    page.on('close', () => {
      context.close().catch(() => undefined);
    });
    await page.goto(pathToFileURL(file).toString());
    return { page, requests };
  }

  before(async () => {
    browser = await launchChromium();
    ship = await makeShip('tally-offline-');
    dir = mkdtempSync(join(tmpdir(), 'tally-offline-'));
    good = (await sealPackage(ship)).bytes;
  });

  after(async () => {
    await browser?.close();
    if (ship) removeShip(ship);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('opens with no network request, shows the signer key and says self-consistent', async () => {
    const file = render(good, 'good');
    const { page, requests } = await open(file);
    const verdict = await panelVerdict(page);
    assert.equal(verdict.verdict, 'self-consistent', verdict.status);
    assert.ok(verdict.status.includes(ship.fx.signer.keyId));
    assert.ok((await mainText(page)).includes(ship.fx.signer.keyId), 'the key fingerprint is shown');
    assert.deepEqual(requests, [pathToFileURL(file).toString()], 'the file itself is the only request');
    assert.deepEqual(await seriousViolations(page), []);
    await screenshot(page, 'offline-self-consistent');
    await page.close();
    const phone = await open(file, 375);
    await panelVerdict(phone.page);
    assert.equal(await horizontalOverflow(phone.page), 0);
    await screenshot(phone.page, 'offline-phone');
    await phone.page.close();
  });

  it('says verified only once the signer key is pinned, by key id or by its public key file', async () => {
    const file = render(good, 'pinned');
    const { page, requests } = await open(file);
    await panelVerdict(page);
    await page.fill('#pin-key', ship.fx.signer.keyId);
    await page.click('#pin-apply');
    await page.waitForFunction(
      () => document.getElementById('verify')?.dataset.verdict !== 'self-consistent',
    );
    let verdict = await panelVerdict(page);
    assert.equal(verdict.verdict, 'verified', verdict.status);
    await screenshot(page, 'offline-verified');

    const stranger = keyId(generateKeyPair().publicKey);
    await page.fill('#pin-key', stranger);
    await page.click('#pin-apply');
    await page.waitForFunction(() => document.getElementById('verify')?.dataset.verdict === 'failed');
    verdict = await panelVerdict(page);
    assert.equal(verdict.failedCheck, 'signer_pinned');
    assert.ok(verdict.status.includes(stranger));

    await page.setInputFiles('#pin-file', keyPaths(ship.fx.state, 'ship').publicPath);
    await page.waitForFunction(() => document.getElementById('verify')?.dataset.verdict === 'verified');
    assert.deepEqual(requests, [pathToFileURL(file).toString()]);
    await page.close();
  });

  it('turns red on a tampered package, naming the check the CLI verifier names', async () => {
    const key = rawPublicKey(ship.fx.signer.privateKey);
    for (const variant of tamperCorpus(good, ship.fx.signer.privateKey)
      .filter((c) => c.expect !== null)
      .slice(0, 4)) {
      const file = render(variant.bytes, 'tampered');
      const { page } = await open(file);
      const verdict = await panelVerdict(page);
      const cli = await verifyPackage(variant.bytes, { trusted: [key], now: new Date() });
      assert.equal(verdict.verdict, 'failed', variant.name);
      assert.equal(
        verdict.failedCheck,
        cli.checks.find((c) => !c.ok && c.code !== 'skipped')?.check,
        variant.name,
      );
      await page.close();
    }
  });

  it("gives the CLI verifier's verdict on every package of the tamper corpus, in Chromium", async () => {
    // A rendered file is a secure context (WebCrypto is there) and carries the bundle.
    const { page } = await open(render(good, 'corpus'));
    await panelVerdict(page);
    assert.equal(
      readFileSync(join(dir, 'corpus.html'), 'utf8').includes(readFileSync(BUNDLE, 'utf8').slice(0, 2000)),
      true,
    );
    const key = rawPublicKey(ship.fx.signer.privateKey);
    const now = new Date(Date.now() + 60_000);
    const other = rawPublicKey(generateKeyPair().publicKey);
    const cases = [
      ...tamperCorpus(good, ship.fx.signer.privateKey).map((c) => ({ ...c, key })),
      { name: 'a key that did not sign', bytes: good, key: other },
    ];
    for (const c of cases) {
      const cli = await verifyPackage(c.bytes, { trusted: [c.key], now });
      const inPage = await page.evaluate(
        async ({ bytes, key, at }) => {
          const decode = (b: string) => Uint8Array.from(atob(b), (ch) => ch.charCodeAt(0));
          const api = (
            globalThis as unknown as {
              tallyVerifier: { verifyInBrowser(b: Uint8Array, o: unknown): Promise<unknown> };
            }
          ).tallyVerifier;
          return api.verifyInBrowser(decode(bytes), { keys: [decode(key)], now: new Date(at) });
        },
        {
          bytes: c.bytes.toString('base64'),
          key: Buffer.from(c.key).toString('base64'),
          at: now.toISOString(),
        },
      );
      assert.equal(verdictOf(inPage as Parameters<typeof verdictOf>[0]), verdictOf(cli), c.name);
    }
    await page.close();
  });
});
