/**
 * `tally receipt render` without a browser: the file holds the page, the script and the package
 * bytes, names nothing to fetch, and its Content-Security-Policy allows exactly the embedded
 * script (by its SHA-256, recomputed here) and no connection.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeShip, removeShip, type ShipUnderTest, sealPackage } from '../hub-fixture.js';
import { BUNDLE } from './tamper-corpus.js';

const TALLY = resolve('bin', 'tally.js');

describe('tally receipt render', () => {
  let ship: ShipUnderTest;
  let dir: string;
  let pkg: string;
  let bytes: Buffer;
  before(async () => {
    ship = await makeShip('tally-render-');
    dir = mkdtempSync(join(tmpdir(), 'tally-render-'));
    bytes = (await sealPackage(ship)).bytes;
    pkg = join(dir, 'p.tally');
    writeFileSync(pkg, bytes);
  });
  after(() => {
    removeShip(ship);
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes one file with the package, the verifier and a policy that allows only that script', () => {
    const out = join(dir, 'receipt.html');
    const run = spawnSync(process.execPath, [TALLY, 'receipt', 'render', pkg, '-o', out, '--json'], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as { path: string; signer_keys: string[]; session: string };
    assert.deepEqual(answer.signer_keys, [ship.fx.signer.keyId]);
    const html = readFileSync(out, 'utf8');
    assert.ok(html.includes(bytes.toString('base64')), 'the package bytes are embedded');
    assert.ok(html.includes(ship.fx.signer.keyId), 'the signer key fingerprint is shown');
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    assert.equal(scripts.length, 1);
    assert.equal(scripts[0], readFileSync(BUNDLE, 'utf8').replace(/<\/script/gi, '<\\/script'));
    const attribute = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
    const csp = attribute.replaceAll('&#39;', "'").replaceAll('&amp;', '&');
    const hash = createHash('sha256').update(scripts[0]!, 'utf8').digest('base64');
    assert.ok(csp.includes(`script-src 'sha256-${hash}'`), csp);
    assert.ok(csp.includes("connect-src 'none'") && csp.includes("default-src 'none'"), csp);
    assert.deepEqual(html.match(/\b(?:src|href|action)=["']?(?:https?:)?\/\//gi), null, 'nothing to fetch');
  });

  it('needs -o (exit 2) and a package that exists (exit 2)', () => {
    assert.equal(
      spawnSync(process.execPath, [TALLY, 'receipt', 'render', pkg], { encoding: 'utf8' }).status,
      2,
    );
    const missing = spawnSync(
      process.execPath,
      [TALLY, 'receipt', 'render', join(dir, 'nope.tally'), '-o', join(dir, 'x.html')],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(missing.status, 2);
  });
});
