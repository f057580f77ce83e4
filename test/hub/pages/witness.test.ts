/**
 * witness_consistent on the receipt page, in a real Chromium against a real hub: the panel checks
 * every chain head the hub witnessed for the session (signed by the key the package is verified
 * with, in the signed log, extended by the package) and agrees with `tally verify --hub`, run as a
 * real process on the same package and hub — line for line, messages included. Heads the package
 * does not extend are sent as the CLI tests send them; a forged or unlogged head is written into
 * the hub's store behind its back.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { canonicalize } from '../../../src/core/canonical.js';
import { digest } from '../../../src/core/hash.js';
import { generateKeyPair, rawPublicKey } from '../../../src/core/keys.js';
import { pushPackage, registerShip } from '../../../src/hub-client/push.js';
import { sendChainHead, signChainHead } from '../../../src/hub-client/witness.js';
import { runTally } from '../../cli/tally-process.js';
import { removeTempDir, tempDir } from '../../temp.js';
import {
  makeShip,
  recordDigests,
  removeShip,
  type ShipUnderTest,
  sealPackage,
  startTestHub,
  type TestHub,
  writeSqliteStore,
} from '../hub-fixture.js';
import {
  launchChromium,
  type PanelVerdict,
  panelVerdict,
  screenshot,
  skipWithoutChromium,
} from './browser.js';

interface CliCheck {
  check: string;
  ok: boolean;
  code: string;
  detail: unknown;
}

/** A CLI check as the panel lists it: mark, name, and for a failure its code and message. */
function asListed(c: CliCheck): string {
  if (c.ok) return `✓ ${c.check}`;
  if (c.code === 'skipped') return `– ${c.check} — skipped`;
  const message = (c.detail as { message?: unknown } | null)?.message;
  return `✗ ${c.check} — ${c.code}${typeof message === 'string' && message ? `: ${message}` : ''}`;
}

describe('the receipt panel checks the heads the hub witnessed', { skip: skipWithoutChromium() }, () => {
  let browser: Browser;
  let hub: TestHub;
  let ship: ShipUnderTest;
  let dir: string;
  const packages: Record<string, { session: string; bytes: Buffer; path: string }> = {};

  async function witness(session: string, seq: number, recordDigest: string): Promise<void> {
    await sendChainHead(hub.url, ship.key, {
      session,
      seq,
      digest: recordDigest,
      time: new Date().toISOString(),
    });
  }

  /** Rewrites a witnessed head's row in the hub's SQLite store. */
  function rewriteHead(session: string, seq: number, set: string, value: unknown): void {
    assert.equal(
      writeSqliteStore(hub, `UPDATE heads SET ${set} WHERE session = ? AND seq = ?`, value, session, seq),
      1,
    );
  }

  /** `tally verify PKG --hub URL --hub-key KEY --trust SHIP_KEY --json`, as a real process. */
  async function cliVerdict(name: string): Promise<{ code: number | null; checks: CliCheck[] }> {
    const ran = await runTally(
      [
        'verify',
        packages[name]!.path,
        '--hub',
        hub.url,
        '--hub-key',
        hub.identity.verifierKey,
        '--trust',
        rawPublicKey(ship.fx.signer.privateKey).toString('base64'),
        '--json',
      ],
      { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, TALLY_HOME: join(dir, 'home'), NO_COLOR: '1' } },
    );
    assert.ok(ran.code === 0 || ran.code === 1, `tally verify ${name}: exit ${ran.code}: ${ran.stderr}`);
    return { code: ran.code, checks: (JSON.parse(ran.stdout) as { checks: CliCheck[] }).checks };
  }

  /** The panel's verdict before and after the reader pins the signer's key. */
  async function pageVerdicts(
    name: string,
  ): Promise<{ unpinned: PanelVerdict; pinned: PanelVerdict; green: boolean }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      const response = await page.goto(new URL(`/receipt/${packages[name]!.session}`, hub.url).toString());
      assert.equal(response?.status(), 200);
      const unpinned = await panelVerdict(page);
      // Marked pending again so the wait below sees the verdict of the pinned run, whatever it is.
      await page.evaluate(() => {
        document.getElementById('verify')!.dataset.verdict = 'pending';
      });
      await page.fill('#pin-key', ship.fx.signer.keyId);
      await page.click('#pin-apply');
      const pinned = await panelVerdict(page);
      const green = await page.evaluate(() => document.getElementById('verify')!.classList.contains('ok'));
      await screenshot(page, `receipt-witness-${name}`);
      return { unpinned, pinned, green };
    } finally {
      await page.close();
    }
  }

  before(async () => {
    browser = await launchChromium();
    hub = await startTestHub();
    ship = await makeShip('tally-pages-witness-');
    dir = tempDir('tally-pages-witness-cli-');
    await registerShip(hub.url, ship.key);
    for (const name of ['witnessed', 'unwitnessed', 'rewritten', 'beyond', 'forged', 'unlogged'])
      packages[name] = { ...(await sealPackage(ship)), path: join(dir, `${name}.tally`) };
    const at = (name: string) => ({
      session: packages[name]!.session,
      digests: recordDigests(packages[name]!.bytes),
    });

    // Heads as the recorder sends them: the first record, every second, and the last.
    const witnessed = at('witnessed');
    const last = witnessed.digests.length - 1;
    for (const seq of [0, 2, 4, last]) await witness(witnessed.session, seq, witnessed.digests[seq]!);
    // The record at seq 3 was rewritten after its head was witnessed.
    const rewritten = at('rewritten');
    await witness(rewritten.session, 0, rewritten.digests[0]!);
    await witness(rewritten.session, 3, digest('the record as it was when witnessed'));
    // A head was witnessed past the package's last record: records were dropped from its end.
    const beyond = at('beyond');
    await witness(beyond.session, beyond.digests.length, digest('a record the package no longer has'));
    // Genuine heads, then changed in the store: one signed by another key under the ship's key id,
    // one pointed at a log entry that is not its own (the next head's).
    for (const name of ['forged', 'unlogged']) {
      const { session, digests } = at(name);
      for (const seq of [0, 2]) await witness(session, seq, digests[seq]!);
    }
    const forged = at('forged');
    const stranger = generateKeyPair().privateKey;
    const forgery = signChainHead(
      { keyId: ship.key.keyId, privateKey: stranger },
      { session: forged.session, seq: 2, digest: forged.digests[2]!, time: new Date().toISOString() },
    );
    rewriteHead(forged.session, 2, 'envelope = ?', canonicalize(forgery));
    rewriteHead(at('unlogged').session, 0, 'log_index = log_index + ?', 1);

    for (const pkg of Object.values(packages)) {
      await pushPackage(hub.url, pkg.session, pkg.bytes, ship.key);
      writeFileSync(pkg.path, pkg.bytes);
    }
  });

  after(async () => {
    await browser?.close();
    await hub?.close();
    if (ship) removeShip(ship);
    if (dir) removeTempDir(dir);
  });

  it('a package that extends every witnessed head: witness_consistent ✓, green once the key is pinned, as the CLI says', async () => {
    const cli = await cliVerdict('witnessed');
    assert.equal(cli.code, 0);
    const row = cli.checks.find((c) => c.check === 'witness_consistent')!;
    assert.deepEqual([row.ok, row.code, (row.detail as { heads: number }).heads], [true, 'ok', 4]);

    const { unpinned, pinned, green } = await pageVerdicts('witnessed');
    assert.equal(unpinned.verdict, 'self-consistent', unpinned.status);
    assert.equal(pinned.verdict, 'verified', pinned.status);
    assert.equal(green, true, 'the panel is green');
    assert.match(pinned.status, /witnessed heads/);
    assert.deepEqual(pinned.checks.slice(-2), ['✓ hub_inclusion', '✓ witness_consistent']);
    assert.deepEqual(pinned.checks, cli.checks.map(asListed));
    assert.deepEqual(unpinned.checks, pinned.checks);
  });

  it('a session with no witnessed head: witness_consistent is information only, as in the CLI', async () => {
    const cli = await cliVerdict('unwitnessed');
    assert.equal(cli.code, 0);
    assert.equal(cli.checks.find((c) => c.check === 'witness_consistent')?.code, 'info');
    const { pinned, green } = await pageVerdicts('unwitnessed');
    assert.equal(pinned.verdict, 'verified', pinned.status);
    assert.equal(green, true);
    assert.deepEqual(pinned.checks, cli.checks.map(asListed));
  });

  const failing: [string, string, RegExp][] = [
    ['rewritten', 'witness-mismatch', /^record 3 is not the one witnessed$/],
    ['beyond', 'witness-beyond-end', /^a head at seq \d+ was witnessed, but the package ends at \d+$/],
    ['forged', 'bad-package', /does not verify under the pinned key it names/],
    ['unlogged', 'bad-package', /^witnessed head 0 is not in the signed log$/],
  ];
  for (const [name, code, message] of failing)
    it(`a head the package does not answer (${name}): the panel is red naming witness_consistent, as the CLI is`, async () => {
      const cli = await cliVerdict(name);
      assert.equal(cli.code, 1);
      const failed = cli.checks.filter((c) => !c.ok && c.code !== 'skipped');
      assert.deepEqual(
        failed.map((c) => [c.check, c.code]),
        [['witness_consistent', code]],
      );
      assert.match((failed[0]!.detail as { message: string }).message, message);

      const { unpinned, pinned, green } = await pageVerdicts(name);
      for (const verdict of [unpinned, pinned]) {
        assert.equal(verdict.verdict, 'failed', verdict.status);
        assert.equal(verdict.failedCheck, 'witness_consistent');
        assert.ok(verdict.status.includes(`witness_consistent (${code})`), verdict.status);
        assert.deepEqual(verdict.checks, cli.checks.map(asListed));
      }
      assert.equal(green, false);
    });
});
