import assert from 'node:assert/strict';
import { sign, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { DsseError, pae, signEnvelope, verifyEnvelope } from '../../src/core/dsse.js';
import { generateKeyPair, keyId, rawPublicKey, toPrivateKey, toPublicKey } from '../../src/core/keys.js';

// RFC 8032 §7.1, TEST 1 and TEST 2.
const RFC8032 = [
  {
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
];

describe('Ed25519 keys', () => {
  it('imports raw RFC 8032 keys and reproduces the RFC signatures', () => {
    for (const v of RFC8032) {
      const privateKey = toPrivateKey(Buffer.from(v.secret, 'hex'));
      assert.equal(rawPublicKey(privateKey).toString('hex'), v.public);
      assert.equal(sign(null, Buffer.from(v.message, 'hex'), privateKey).toString('hex'), v.signature);
      assert.equal(keyId(Buffer.from(v.public, 'hex')), keyId(privateKey));
    }
  });

  it('rejects keys of the wrong size or type', () => {
    assert.throws(() => toPrivateKey(new Uint8Array(31)), /32 bytes/);
    assert.throws(() => toPublicKey(new Uint8Array(33)), /32 bytes/);
    assert.throws(() => toPrivateKey(generateKeyPair().publicKey), /private key/);
  });
});

describe('DSSE', () => {
  it('builds PAE exactly as the DSSE spec example', () => {
    const out = pae('http://example.com/HelloWorld', Buffer.from('hello world'));
    assert.equal(out.toString(), 'DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  });

  it('counts lengths in bytes, not characters', () => {
    assert.equal(pae('t/é', Buffer.from('€')).toString(), 'DSSEv1 4 t/é 3 €');
  });

  it('signs over PAE so an independent verifier agrees', () => {
    const { privateKey, publicKey } = generateKeyPair();
    const env = signEnvelope('{"a":1}', 'application/json', privateKey);
    const sig = Buffer.from(env.signatures[0]!.sig, 'base64');
    assert.ok(verify(null, Buffer.from('DSSEv1 16 application/json 7 {"a":1}'), publicKey, sig));
    assert.equal(env.payload, Buffer.from('{"a":1}').toString('base64'));
    assert.equal(env.signatures[0]!.keyid, keyId(publicKey));
    const verified = verifyEnvelope(env, [publicKey]);
    assert.equal(verified.payload.toString(), '{"a":1}');
    assert.deepEqual(verified.keyIds, [keyId(publicKey)]);
  });

  it('never trusts an unpinned key, even one named in keyid', () => {
    const attacker = generateKeyPair();
    const pinned = generateKeyPair();
    const env = signEnvelope('x', 't', { privateKey: attacker.privateKey, keyid: keyId(pinned.publicKey) });
    assert.throws(
      () => verifyEnvelope(env, [pinned.publicKey]),
      (e: unknown) => e instanceof DsseError && e.code === 'no-trusted-signature',
    );
    assert.throws(
      () => verifyEnvelope(env, []),
      (e: unknown) => e instanceof DsseError && e.code === 'no-trusted-keys',
    );
  });

  it('supports multiple signatures and thresholds', () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    const env = signEnvelope('x', 't', [a.privateKey, b.privateKey]);
    assert.equal(env.signatures.length, 2);
    assert.deepEqual(
      verifyEnvelope(env, [a.publicKey, b.publicKey], 2).keyIds,
      [keyId(a.publicKey), keyId(b.publicKey)].sort(),
    );
    assert.throws(() => verifyEnvelope(env, [a.publicKey], 2), /only 1 of the required 2/);
    // the same signature twice does not count twice
    const doubled = { ...env, signatures: [env.signatures[0]!, env.signatures[0]!] };
    assert.throws(() => verifyEnvelope(doubled, [a.publicKey, b.publicKey], 2));
  });

  it('fails on any change to payload, type or signature', () => {
    const { privateKey, publicKey } = generateKeyPair();
    const env = signEnvelope('payload', 'type/a', privateKey);
    assert.throws(() => verifyEnvelope({ ...env, payloadType: 'type/b' }, [publicKey]));
    assert.throws(() =>
      verifyEnvelope({ ...env, payload: Buffer.from('payloaD').toString('base64') }, [publicKey]),
    );
    const sig = Buffer.from(env.signatures[0]!.sig, 'base64');
    for (let bit = 0; bit < sig.length * 8; bit += 37) {
      const flipped = Buffer.from(sig);
      flipped[bit >> 3]! ^= 1 << (bit & 7);
      assert.throws(() =>
        verifyEnvelope({ ...env, signatures: [{ sig: flipped.toString('base64') }] }, [publicKey]),
      );
    }
  });

  it('is strict about Ed25519: a signature with S + L (non-canonical scalar) is refused', () => {
    // L, the order of the base point (RFC 8032 §5.1), little-endian as in the signature's S half.
    const L = BigInt('0x1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed');
    const { privateKey, publicKey } = generateKeyPair();
    const env = signEnvelope('strict', 't', privateKey);
    const sig = Buffer.from(env.signatures[0]!.sig, 'base64');
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString('hex')}`);
    const malleated = Buffer.from((s + L).toString(16).padStart(64, '0'), 'hex').reverse();
    const forged = Buffer.concat([sig.subarray(0, 32), malleated]);
    assert.equal(verifyEnvelope(env, [publicKey]).payload.toString(), 'strict');
    assert.throws(() =>
      verifyEnvelope({ ...env, signatures: [{ sig: forged.toString('base64') }] }, [publicKey]),
    );
  });

  it('strict mode binds the keyid: it must name the pinned key the signature verifies under', () => {
    const { privateKey, publicKey } = generateKeyPair();
    const other = generateKeyPair();
    const env = signEnvelope('bound', 't', privateKey);
    const relabelled = {
      ...env,
      signatures: [{ ...env.signatures[0]!, keyid: 'key_00000000000000000000000000000000' }],
    };
    // As a hint only, a wrong keyid is tolerated (DSSE semantics); strictly, it is refused.
    assert.equal(verifyEnvelope(relabelled, [publicKey]).payload.toString(), 'bound');
    assert.throws(
      () => verifyEnvelope(relabelled, [publicKey], { strict: true }),
      /does not verify under the pinned key it names/,
    );
    const unlabelled = { ...env, signatures: [{ sig: env.signatures[0]!.sig }] };
    assert.throws(() => verifyEnvelope(unlabelled, [publicKey], { strict: true }), /has no keyid/);
    // A keyid naming another pinned key whose key did not sign is refused too.
    const misnamed = { ...env, signatures: [{ ...env.signatures[0]!, keyid: keyId(other.publicKey) }] };
    assert.throws(() => verifyEnvelope(misnamed, [publicKey, other.publicKey], { strict: true }));
    assert.deepEqual(verifyEnvelope(env, [publicKey], { strict: true }).keyIds, [keyId(publicKey)]);
    // An extra, unverifiable signature cannot ride along in strict mode.
    const extra = {
      ...env,
      signatures: [
        ...env.signatures,
        {
          keyid: keyId(publicKey),
          sig: env.signatures[0]!.sig.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
        },
      ],
    };
    assert.throws(() => verifyEnvelope(extra, [publicKey], { strict: true }));
  });

  it('rejects non-canonical base64 and malformed envelopes clearly', () => {
    const { privateKey, publicKey } = generateKeyPair();
    const env = signEnvelope('ab', 't', privateKey);
    assert.throws(() => verifyEnvelope({ ...env, payload: `${env.payload}\n` }, [publicKey]), /base64/);
    assert.throws(
      () => verifyEnvelope({ ...env, payload: 'YWJ=' }, [publicKey]),
      /canonical standard base64/,
    );
    assert.throws(
      () => verifyEnvelope({ ...env, payload: env.payload.replaceAll('=', '') }, [publicKey]),
      /base64/,
    );
    assert.throws(() => verifyEnvelope({ payload: 'x' }, [publicKey]), /payloadType/);
    assert.throws(() => verifyEnvelope({ ...env, signatures: [] }, [publicKey]), /non-empty/);
    assert.throws(() => verifyEnvelope(null, [publicKey]), /not an object/);
  });
});
