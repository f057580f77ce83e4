/**
 * HTTP Message Signatures and Content-Digest. Oracles: RFC 9421 Appendix B.2.6 (the Ed25519 test
 * key of B.1.4 signs deterministically, so the signature is known to the byte) and the sha-256
 * example of RFC 9530 §2 / RFC 9421 B.2 for the body `{"hello": "world"}`.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, it } from 'node:test';
import { contentDigest, contentDigestSha256 } from '../../src/core/content-digest.js';
import {
  parseSignatures,
  type SignedRequest,
  signatureBase,
  signRequest,
  verifyRequestSignature,
} from '../../src/core/http-signature.js';
import { generateKeyPair } from '../../src/core/keys.js';
import { parseDictionary } from '../../src/core/structured-fields.js';

const TEST_KEY_ED25519 = createPrivateKey(
  '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n',
);
const B26_INPUT =
  'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"';
const B26_SIGNATURE =
  'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:';

function request(
  headers: Record<string, string>,
  url = 'https://example.com/foo?param=Value&Pet=dog',
): SignedRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method: 'POST', url, header: (name) => lower[name] };
}

const B2_HEADERS = {
  Host: 'example.com',
  Date: 'Tue, 20 Apr 2021 02:07:55 GMT',
  'Content-Type': 'application/json',
  'Content-Digest':
    'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
  'Content-Length': '18',
};

describe('RFC 9421 signatures', () => {
  it('reproduces the B.2.6 Ed25519 signature and its Signature-Input', () => {
    const signed = signRequest(request(B2_HEADERS), {
      components: ['date', '@method', '@path', '@authority', 'content-type', 'content-length'],
      created: 1618884473,
      keyid: 'test-key-ed25519',
      privateKey: TEST_KEY_ED25519,
      label: 'sig-b26',
    });
    assert.equal(signed.input, B26_INPUT);
    assert.equal(signed.signature, B26_SIGNATURE);
  });

  it('verifies the B.2.6 signature as published, and not after a covered field changes', () => {
    const req = request({ ...B2_HEADERS, 'Signature-Input': B26_INPUT, Signature: B26_SIGNATURE });
    const [parsed] = parseSignatures(req);
    assert.ok(parsed);
    assert.equal(parsed.label, 'sig-b26');
    assert.equal(parsed.params.created, 1618884473);
    const publicKey = createPublicKey(TEST_KEY_ED25519);
    assert.equal(verifyRequestSignature(req, parsed, publicKey), true);
    const changed = request({
      ...B2_HEADERS,
      'Content-Length': '19',
      'Signature-Input': B26_INPUT,
      Signature: B26_SIGNATURE,
    });
    assert.equal(verifyRequestSignature(changed, parsed, publicKey), false);
    const moved = request({ ...B2_HEADERS }, 'https://example.com/bar');
    assert.equal(verifyRequestSignature(moved, parsed, publicKey), false);
  });

  it('builds the base of derived components as RFC 9421 §2.2 shows', () => {
    const req = request({ Host: 'www.example.com' }, 'https://www.example.com/path?param=value');
    const base = signatureBase(
      req,
      ['@method', '@target-uri', '@authority', '@scheme', '@path', '@query'],
      '()',
    );
    assert.equal(
      base,
      [
        '"@method": POST',
        '"@target-uri": https://www.example.com/path?param=value',
        '"@authority": www.example.com',
        '"@scheme": https',
        '"@path": /path',
        '"@query": ?param=value',
        '"@signature-params": ()',
      ].join('\n'),
    );
  });

  it('round-trips nonce, keyid and alg, and refuses what it does not support', () => {
    const { privateKey, publicKey } = generateKeyPair();
    const headers = { 'Content-Digest': contentDigest('x') };
    const req = request(headers, 'http://127.0.0.1:8080/v1/x');
    const signed = signRequest(req, {
      components: ['@method', '@target-uri', '@authority', 'content-digest'],
      created: 1700000000,
      nonce: 'n-1',
      keyid: 'key_1',
      alg: 'ed25519',
      privateKey,
    });
    assert.equal(
      signed.input,
      'sig1=("@method" "@target-uri" "@authority" "content-digest");created=1700000000;nonce="n-1";keyid="key_1";alg="ed25519"',
    );
    const withSig = request(
      { ...headers, 'Signature-Input': signed.input, Signature: signed.signature },
      req.url,
    );
    const [parsed] = parseSignatures(withSig);
    assert.deepEqual(parsed?.params, { created: 1700000000, nonce: 'n-1', keyid: 'key_1', alg: 'ed25519' });
    assert.equal(verifyRequestSignature(withSig, parsed!, publicKey), true);
    assert.throws(
      () =>
        parseSignatures(request({ 'Signature-Input': 'sig1=("a";sf);created=1', Signature: 'sig1=:AA==:' })),
      /not supported/,
    );
    assert.throws(() => parseSignatures(request({})), /no Signature-Input/);
    assert.throws(
      () => parseSignatures(request({ 'Signature-Input': 'sig1=("a")', Signature: 'sig2=:AA==:' })),
      /missing/,
    );
  });
});

describe('RFC 9530 Content-Digest', () => {
  it('matches the RFC example for {"hello": "world"}', () => {
    assert.equal(
      contentDigest('{"hello": "world"}'),
      'sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
    );
    const both =
      'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:, sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:';
    assert.equal(
      contentDigestSha256(both)?.toString('base64'),
      'X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=',
    );
    assert.equal(contentDigestSha256('sha-512=:AA==:'), null);
    assert.equal(contentDigestSha256('sha-256=X48E'), null);
    assert.equal(contentDigestSha256('sha-256=:AAAA:'), null); // not 32 bytes
  });

  it('parses dictionaries strictly', () => {
    assert.throws(() => parseDictionary('a=1,'), /trailing comma/);
    assert.throws(() => parseDictionary('a="\u00e9"'), /non-ASCII/);
    assert.deepEqual([...parseDictionary('a=1, b, c=?0').keys()], ['a', 'b', 'c']);
  });
});
