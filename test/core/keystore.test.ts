import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { signEnvelope, verifyEnvelope } from '../../src/core/dsse.js';
import { KeyError } from '../../src/core/keys.js';
import { createKey, keyPaths, loadPrivateKey, loadPublicKey } from '../../src/core/keystore.js';
import { tempDir as trackedTempDir } from '../temp.js';

function tempDir(): string {
  return trackedTempDir('tally-keys-');
}

function code(expected: string) {
  return (e: unknown) => e instanceof KeyError && e.code === expected;
}

describe('key store', () => {
  it('creates a 0600 private key that signs for its public key', () => {
    const dir = tempDir();
    const created = createKey(dir, 'ship');
    const { privatePath, publicPath } = keyPaths(dir, 'ship');
    assert.equal(statSync(privatePath).mode & 0o777, 0o600);
    assert.match(created.keyId, /^key_[0-9a-f]{32}$/);
    assert.match(created.shipId, /^ship_[0-9a-f]{32}$/);
    const { privateKey } = loadPrivateKey(dir, 'ship');
    const env = signEnvelope('hello', 't', privateKey);
    assert.equal(verifyEnvelope(env, [loadPublicKey(dir, 'ship').publicKey]).payload.toString(), 'hello');
    assert.ok(!readFileSync(publicPath, 'utf8').includes('privateKey'));
  });

  it('never overwrites an existing key', () => {
    const dir = tempDir();
    const first = createKey(dir, 'ship');
    const before = readFileSync(keyPaths(dir, 'ship').privatePath);
    assert.throws(() => createKey(dir, 'ship'), code('exists'));
    assert.deepEqual(readFileSync(keyPaths(dir, 'ship').privatePath), before);
    assert.equal(loadPublicKey(dir, 'ship').keyId, first.keyId);
  });

  it('encrypts with a passphrase; a wrong one is a clear error', () => {
    const dir = tempDir();
    const created = createKey(dir, 'ship', { passphrase: 'correct horse' });
    assert.equal(created.encrypted, true);
    const text = readFileSync(keyPaths(dir, 'ship').privatePath, 'utf8');
    assert.match(text, /"kdf":"scrypt"/);
    assert.throws(() => loadPrivateKey(dir, 'ship'), code('passphrase-required'));
    assert.throws(() => loadPrivateKey(dir, 'ship', 'wrong'), code('wrong-passphrase'));
    assert.equal(loadPrivateKey(dir, 'ship', 'correct horse').key.keyId, created.keyId);
  });

  it('refuses a private key readable by others, naming the fix', () => {
    const dir = tempDir();
    createKey(dir, 'ship');
    const { privatePath } = keyPaths(dir, 'ship');
    chmodSync(privatePath, 0o644);
    assert.throws(
      () => loadPrivateKey(dir, 'ship'),
      (e: unknown) => e instanceof KeyError && e.code === 'permissions' && e.message.includes('chmod 600'),
    );
  });

  it('detects corrupt and tampered key files without touching them', () => {
    const dir = tempDir();
    createKey(dir, 'ship');
    const { privatePath } = keyPaths(dir, 'ship');
    const good = readFileSync(privatePath, 'utf8');
    writeFileSync(privatePath, good.slice(0, 40));
    assert.throws(() => loadPrivateKey(dir, 'ship'), code('corrupt'));
    assert.equal(readFileSync(privatePath, 'utf8'), good.slice(0, 40));
    // swap in another key's public half: the pair no longer matches
    const other = tempDir();
    createKey(other, 'ship');
    const otherPub = JSON.parse(readFileSync(keyPaths(other, 'ship').privatePath, 'utf8'));
    const mixed = { ...JSON.parse(good), publicKey: otherPub.publicKey, keyId: otherPub.keyId };
    writeFileSync(privatePath, JSON.stringify(mixed));
    assert.throws(() => loadPrivateKey(dir, 'ship'), code('corrupt'));
  });

  it('says how to create a missing key', () => {
    assert.throws(
      () => loadPrivateKey(tempDir(), 'ship'),
      (e: unknown) => e instanceof KeyError && e.code === 'not-found' && /tally init/.test(e.message),
    );
  });
});
