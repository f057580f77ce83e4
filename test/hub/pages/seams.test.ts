/**
 * The browser seams against the Node.js built-ins they stand in for: the synchronous SHA-256
 * against node:crypto (FIPS 180-4 vectors and every length across the block boundaries), the POSIX
 * path functions against node:path's posix.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { describe, it } from 'node:test';
import { posix as browserPosix } from '../../../src/hub/pages/verifier/browser-path.js';
import { Sha256 } from '../../../src/hub/pages/verifier/sha256.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('browser SHA-256', () => {
  it('gives the FIPS 180-4 example digests', () => {
    assert.equal(
      hex(new Sha256().update(Buffer.from('abc')).digest()),
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    assert.equal(
      hex(new Sha256().update(new Uint8Array(0)).digest()),
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('equals node:crypto for every length up to 300 bytes, in one piece and in chunks', () => {
    const data = randomBytes(300);
    for (let n = 0; n <= data.length; n++) {
      const input = data.subarray(0, n);
      const expected = createHash('sha256').update(input).digest('hex');
      assert.equal(hex(new Sha256().update(input).digest()), expected, `length ${n}`);
      const chunked = new Sha256();
      for (let at = 0; at < n; at += 7) chunked.update(input.subarray(at, Math.min(n, at + 7)));
      assert.equal(hex(chunked.digest()), expected, `length ${n} in chunks`);
    }
  });
});

describe('browser POSIX paths', () => {
  const paths = [
    '',
    '.',
    '..',
    '/',
    '//a//b/',
    'a/./b/../c',
    '/a/b/../../..',
    '../x/../../y',
    'a/',
    '/usr/lib/',
    'x.txt',
    '/a/b.c.d',
  ];
  it('normalize, isAbsolute, basename, dirname equal node:path', () => {
    for (const p of paths) {
      assert.equal(browserPosix.normalize(p), posix.normalize(p), `normalize ${JSON.stringify(p)}`);
      assert.equal(browserPosix.isAbsolute(p), posix.isAbsolute(p), `isAbsolute ${JSON.stringify(p)}`);
      assert.equal(browserPosix.basename(p), posix.basename(p), `basename ${JSON.stringify(p)}`);
      assert.equal(browserPosix.dirname(p), posix.dirname(p), `dirname ${JSON.stringify(p)}`);
    }
    assert.equal(browserPosix.basename('/a/b.txt', '.txt'), posix.basename('/a/b.txt', '.txt'));
  });
  it('join, resolve (absolute), relative equal node:path', () => {
    for (const a of paths)
      for (const b of paths) {
        assert.equal(browserPosix.join(a, b), posix.join(a, b), `join ${a} ${b}`);
        const ra = `/${a}`;
        const rb = `/${b}`;
        assert.equal(browserPosix.resolve(ra, b), posix.resolve(ra, b), `resolve ${ra} ${b}`);
        assert.equal(browserPosix.relative(ra, rb), posix.relative(ra, rb), `relative ${ra} ${rb}`);
      }
  });
});
