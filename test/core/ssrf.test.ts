/**
 * The SSRF guard against Treeship's shared URL vectors (../shared/reference/treeship-vectors:
 * behavioural, `blocked` must throw and `allowed` must not), read in place, and the connect-time
 * lookup against names that resolve to loopback.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { checkFetchUrl, guardedLookup, isPublicAddress, SsrfError } from '../../src/core/ssrf.js';

const VECTORS = JSON.parse(
  readFileSync('../shared/reference/treeship-vectors/vectors/ssrf-urls.json', 'utf8'),
) as { blocked: { url: string; why: string }[]; allowed: { url: string; why: string }[] };

describe('SSRF guard', () => {
  it('refuses every blocked vector', () => {
    assert.ok(VECTORS.blocked.length >= 19);
    for (const { url, why } of VECTORS.blocked)
      assert.throws(() => checkFetchUrl(url), SsrfError, `${url} (${why}) was allowed`);
  });

  it('allows every allowed vector', () => {
    assert.ok(VECTORS.allowed.length >= 4);
    for (const { url, why } of VECTORS.allowed)
      assert.doesNotThrow(() => checkFetchUrl(url), `${url} (${why})`);
  });

  it('classifies address literals the vectors leave out', () => {
    for (const ip of [
      '127.1.2.3',
      '::',
      '::1',
      'fe80::1',
      'ff02::1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      '::ffff:10.0.0.1',
      '198.18.0.1',
      '255.255.255.255',
      '2001:db8::1',
    ])
      assert.equal(isPublicAddress(ip), false, ip);
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:93.184.216.34'])
      assert.equal(isPublicAddress(ip), true, ip);
    assert.throws(() => checkFetchUrl('http://2130706433/'), SsrfError); // 127.0.0.1 as one number
    assert.throws(() => checkFetchUrl('http://0x7f.1/'), SsrfError);
    assert.throws(() => checkFetchUrl('http://intranethost/'), SsrfError); // single-label name
  });

  it('refuses at connect time a name that resolves to loopback', async () => {
    const error = await new Promise<Error | null>((resolve) =>
      guardedLookup('localhost', {}, (err) => resolve(err)),
    );
    assert.ok(error instanceof SsrfError);
    assert.equal(error.code, 'private-address');
  });
});
