/**
 * Agent certificates: issue and verify, refusal of bad input with the field named, and the
 * certificate checks of `verifyPackage` (signature, ship id, validity window). Oracles: the issue
 * text (the window is the session's own, not now) and independent derivations of ids.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import { type Envelope, signEnvelope } from '../../src/core/dsse.js';
import { generateKeyPair } from '../../src/core/keys.js';
import {
  CERTIFICATE_PAYLOAD_TYPE,
  CertificateError,
  issueCertificate,
  verifyCertificate,
} from '../../src/evidence/certificate.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { type Fixture, makeFixture, runSession, steppingClock, toolBefore } from '../session/fixture.js';

const FROM = new Date('2026-02-01T00:00:00Z');
const UNTIL = new Date('2026-02-02T00:00:00Z');

function request(overrides: Record<string, unknown> = {}) {
  return {
    name: 'coder',
    allow: ['Read', 'Edit(src/**)', 'Bash(git status*)'],
    forbid: ['Bash(rm -rf *)'],
    escalate: ['Bash(git push*)'],
    model: 'm-1',
    provider: 'p-1',
    validFrom: FROM,
    validUntil: UNTIL,
    issuedAt: FROM,
    serial: 'cert_test',
    ...overrides,
  };
}

/** "ship_"/"key_" + the first 16 bytes of SHA-256 over the raw public key, derived without Tally. */
function fingerprint(publicKey: import('node:crypto').KeyObject): string {
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  return createHash('sha256').update(raw).digest().subarray(0, 16).toString('hex');
}

function payloadOf(envelope: Envelope): Record<string, unknown> {
  return JSON.parse(Buffer.from(envelope.payload, 'base64').toString()) as Record<string, unknown>;
}

describe('agent certificate issue and verify', () => {
  const ship = generateKeyPair();

  it('round trips: the payload is canonical JSON naming the ship, the agent and the envelope', () => {
    const { certificate, envelope } = issueCertificate(request(), ship.privateKey);
    assert.equal(envelope.payloadType, CERTIFICATE_PAYLOAD_TYPE);
    const payload = payloadOf(envelope);
    assert.equal(Buffer.from(envelope.payload, 'base64').toString(), canonicalize(payload));
    assert.equal(payload.ship_id, `ship_${fingerprint(ship.publicKey)}`);
    assert.deepEqual(payload.issuer, {
      key_id: `key_${fingerprint(ship.publicKey)}`,
      public_key: Buffer.from(ship.publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString(
        'base64',
      ),
    });
    assert.deepEqual(payload.agent, { name: 'coder', model: 'm-1', provider: 'p-1' });
    assert.deepEqual(payload.bounded_actions, ['Read', 'Edit(src/**)', 'Bash(git status*)']);
    assert.deepEqual(payload.forbidden, ['Bash(rm -rf *)']);
    assert.deepEqual(payload.escalation_required, ['Bash(git push*)']);
    assert.equal(payload.valid_from, '2026-02-01T00:00:00.000Z');
    assert.equal(payload.valid_until, '2026-02-02T00:00:00.000Z');
    const verified = verifyCertificate(JSON.parse(JSON.stringify(envelope)), [ship.publicKey]);
    assert.deepEqual(verified.certificate, certificate);
    assert.deepEqual(verified.signerKeyIds, [`key_${fingerprint(ship.publicKey)}`]);
  });

  it('is byte-identical when issued twice with the same inputs (Ed25519 is deterministic)', () => {
    const a = issueCertificate(request(), ship.privateKey).envelope;
    const b = issueCertificate(request(), ship.privateKey).envelope;
    assert.equal(canonicalize(a), canonicalize(b));
  });

  it('a certificate signed by a key that is not pinned fails', () => {
    const other = generateKeyPair();
    const { envelope } = issueCertificate(request(), other.privateKey);
    assert.throws(
      () => verifyCertificate(envelope, [ship.publicKey]),
      (e) => e instanceof CertificateError && e.code === 'signature',
    );
  });

  it('a tampered certificate fails: edited payload, flipped signature, re-signed by a stranger', () => {
    const { envelope } = issueCertificate(request(), ship.privateKey);
    const widened = { ...payloadOf(envelope), bounded_actions: ['*'] };
    const edited = { ...envelope, payload: Buffer.from(canonicalize(widened)).toString('base64') };
    assert.throws(() => verifyCertificate(edited, [ship.publicKey]), CertificateError);
    const sig = Buffer.from(envelope.signatures[0]!.sig, 'base64');
    sig[10] = sig[10]! ^ 1;
    const flipped = { ...envelope, signatures: [{ ...envelope.signatures[0], sig: sig.toString('base64') }] };
    assert.throws(() => verifyCertificate(flipped, [ship.publicKey]), CertificateError);
    // A stranger signing a payload that claims the ship as issuer: pinned or not, it is refused.
    const stranger = generateKeyPair();
    const forged = signEnvelope(canonicalize(widened), CERTIFICATE_PAYLOAD_TYPE, stranger.privateKey);
    assert.throws(() => verifyCertificate(forged, [ship.publicKey]), CertificateError);
    assert.throws(() => verifyCertificate(forged, [ship.publicKey, stranger.publicKey]), CertificateError);
    for (const junk of [null, 42, 'x', {}, { payload: 'e30=', payloadType: CERTIFICATE_PAYLOAD_TYPE }]) {
      assert.throws(() => verifyCertificate(junk, [ship.publicKey]), CertificateError);
    }
  });

  it('refuses invalid patterns and names the field as a JSON pointer', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ allow: ['Read', 'Bash(git status'] }, '/bounded_actions/1'],
      [{ forbid: ['Bash(rm -rf *)', ''] }, '/forbidden/1'],
      [{ escalate: ['Ba*sh'] }, '/escalation_required/0'],
      [{ allow: [] }, '/bounded_actions'],
      [{ name: 'has space' }, '/agent/name'],
      [{ validUntil: FROM }, '/valid_until'],
    ];
    for (const [overrides, field] of cases) {
      assert.throws(
        () => issueCertificate(request(overrides), ship.privateKey),
        (e) => e instanceof CertificateError && e.detail?.field === field && e.message.includes(field),
        `expected ${field} for ${JSON.stringify(overrides)}`,
      );
    }
  });

  it('a signed certificate whose pattern does not parse is refused, not a crash later', () => {
    const { envelope } = issueCertificate(request(), ship.privateKey);
    const bad = { ...payloadOf(envelope), forbidden: ['Bash(rm'] };
    const resigned = signEnvelope(canonicalize(bad), CERTIFICATE_PAYLOAD_TYPE, ship.privateKey);
    assert.throws(
      () => verifyCertificate(resigned, [ship.publicKey]),
      (e) => e instanceof CertificateError && e.detail?.field === '/forbidden/0',
    );
  });
});

describe('certificate checks in verifyPackage', () => {
  let fx: Fixture;
  let certPath: string;
  let envelope: Envelope;
  const events = [toolBefore('c1', 'Read', { file_path: 'README.md' }, 'read')];

  before(async () => {
    fx = await makeFixture('tally-cert-');
    envelope = issueCertificate(request(), fx.signer.privateKey).envelope;
    certPath = join(fx.dir, 'coder.agent.json');
    writeFileSync(certPath, `${canonicalize(envelope)}\n`);
  });

  const check = (result: Awaited<ReturnType<typeof verifyPackage>>, name: string) => {
    const found = result.checks.find((c) => c.check === name);
    assert.ok(found, `no ${name} check`);
    return found;
  };

  it('a session inside the window verifies even when now is long after the certificate expired', async () => {
    const run = await runSession(fx, events, {
      clock: steppingClock('2026-02-01T10:00:00Z'),
      certificatePath: certPath,
    });
    const result = await verifyPackage(run.bytes, {
      trusted: [fx.signer.key.publicKey],
      certificate: envelope,
      now: new Date('2030-01-01T00:00:00Z'),
    });
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    assert.equal(check(result, 'certificate_signature').ok, true);
    assert.equal(check(result, 'ship_id_match').ok, true);
    assert.equal(check(result, 'within_validity_window').ok, true);
  });

  it('a session that started before valid_from, or ended after valid_until, fails the window', async () => {
    for (const start of ['2026-01-31T23:59:58Z', '2026-02-01T23:59:59Z']) {
      const run = await runSession(fx, events, { clock: steppingClock(start), certificatePath: certPath });
      const result = await verifyPackage(run.bytes, {
        trusted: [fx.signer.key.publicKey],
        certificate: envelope,
        now: new Date('2026-02-03T00:00:00Z'),
      });
      assert.equal(result.ok, false);
      const window = check(result, 'within_validity_window');
      assert.equal(window.ok, false, start);
      assert.equal(window.code, 'outside-window');
      // Only the window broke: records, receipt and the other certificate checks still pass.
      for (const c of result.checks)
        if (c.check !== 'within_validity_window') assert.ok(c.ok, `${c.check} ${c.code}`);
    }
  });

  it('a certificate from another ship key fails ship_id_match (and certificate_signature if unpinned)', async () => {
    const run = await runSession(fx, events, { clock: steppingClock('2026-02-01T10:00:00Z') });
    const other = generateKeyPair();
    const foreign = issueCertificate(request(), other.privateKey).envelope;
    const both = await verifyPackage(run.bytes, {
      trusted: [fx.signer.key.publicKey, other.publicKey],
      certificate: foreign,
      now: new Date('2026-02-01T12:00:00Z'),
    });
    assert.equal(both.ok, false);
    assert.equal(check(both, 'certificate_signature').ok, true);
    const ship = check(both, 'ship_id_match');
    assert.equal(ship.ok, false);
    assert.equal(ship.code, 'ship-mismatch');
    const pinnedOne = await verifyPackage(run.bytes, {
      trusted: [fx.signer.key.publicKey],
      certificate: foreign,
      now: new Date('2026-02-01T12:00:00Z'),
    });
    const signature = check(pinnedOne, 'certificate_signature');
    assert.equal(signature.ok, false);
    assert.equal(signature.code, 'bad-certificate');
  });

  it('a certificate that is not an envelope fails certificate_signature without throwing', async () => {
    const run = await runSession(fx, events, { clock: steppingClock('2026-02-01T10:00:00Z') });
    for (const junk of [null, 'text', [], { payload: 1 }]) {
      const result = await verifyPackage(run.bytes, {
        trusted: [fx.signer.key.publicKey],
        certificate: junk,
        now: new Date('2026-02-01T12:00:00Z'),
      });
      assert.equal(result.ok, false);
      assert.equal(check(result, 'certificate_signature').code, 'bad-certificate');
    }
  });
});
