/**
 * The browser verifier bundle (dist/src/hub/pages/verifier.js, what pages load) against the CLI
 * verifier on the tamper corpus: run in a fresh JavaScript context with nothing of Node.js but
 * WebCrypto, its verdict — every named check, its result and code — must equal `verifyPackage`'s.
 * The same corpus runs in Chromium in pages.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createContext, runInContext } from 'node:vm';
import { generateKeyPair, rawPublicKey } from '../../../src/core/keys.js';
import { verifyPackage } from '../../../src/evidence/package/verify.js';
import { makeShip, removeShip, type ShipUnderTest, sealPackage } from '../hub-fixture.js';
import { BUNDLE, tamperCorpus, type Verdict, verdictOf } from './tamper-corpus.js';

type BrowserApi = {
  verifyInBrowser(bytes: Uint8Array, options: { keys: Uint8Array[]; now: Date }): Promise<Verdict>;
};

/** The bundle in a context of its own; bytes are copied into that context's own Uint8Array, as a page has. */
function loadBundle(crypto: unknown = globalThis.crypto): BrowserApi {
  const context = createContext({ crypto, TextEncoder, TextDecoder });
  runInContext(readFileSync(BUNDLE, 'utf8'), context);
  const api = (context as { tallyVerifier: BrowserApi }).tallyVerifier;
  const local = runInContext('(a) => Uint8Array.from(a)', context) as (a: Uint8Array) => Uint8Array;
  return {
    verifyInBrowser: (bytes, options) =>
      api.verifyInBrowser(local(bytes), { keys: options.keys.map(local), now: options.now }),
  };
}

describe('browser verifier bundle', () => {
  let ship: ShipUnderTest;
  let good: Buffer;
  before(async () => {
    ship = await makeShip();
    good = (await sealPackage(ship)).bytes;
  });
  after(() => removeShip(ship));

  it('gives the CLI verdict on every tampered package', async () => {
    const browser = loadBundle();
    const now = new Date(Date.now() + 60_000);
    const publicKey = rawPublicKey(ship.fx.signer.privateKey);
    const corpus = tamperCorpus(good, ship.fx.signer.privateKey);
    assert.ok(corpus.length >= 10);
    for (const variant of corpus) {
      const cli = await verifyPackage(variant.bytes, { trusted: [publicKey], now });
      const inPage = await browser.verifyInBrowser(new Uint8Array(variant.bytes), { keys: [publicKey], now });
      assert.equal(verdictOf(inPage), verdictOf(cli), variant.name);
      // The oracle of the change itself: a valid package passes, a tampered one fails where it was changed.
      const failed = cli.checks.find((c) => !c.ok && c.code !== 'skipped');
      assert.equal(cli.ok, variant.expect === null, variant.name);
      assert.equal(failed?.check ?? null, variant.expect, variant.name);
    }
  });

  it('gives the CLI verdict under a key that did not sign', async () => {
    const browser = loadBundle();
    const now = new Date(Date.now() + 60_000);
    const wrong = rawPublicKey(generateKeyPair().publicKey);
    const cli = await verifyPackage(good, { trusted: [wrong], now });
    const inPage = await browser.verifyInBrowser(new Uint8Array(good), { keys: [wrong], now });
    assert.equal(verdictOf(inPage), verdictOf(cli));
    assert.equal(cli.checks.find((c) => !c.ok && c.code !== 'skipped')?.check, 'signer_pinned');
  });

  it('refuses a signature no WebCrypto check vouched for', async () => {
    // A context whose WebCrypto says no to everything: the seam must not fall back to "valid".
    const subtle = {
      importKey: globalThis.crypto.subtle.importKey.bind(globalThis.crypto.subtle),
      verify: async () => false,
    };
    const api = loadBundle({ subtle, getRandomValues: () => undefined });
    const result = await api.verifyInBrowser(new Uint8Array(good), {
      keys: [rawPublicKey(ship.fx.signer.privateKey)],
      now: new Date(Date.now() + 60_000),
    });
    assert.equal(result.ok, false);
    assert.equal(result.checks.find((c) => !c.ok && c.code !== 'skipped')?.check, 'record_signatures');
  });
});
