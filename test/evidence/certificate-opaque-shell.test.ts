/** The certificate's optional `opaque_shell` field: issued, validated, and absent by default. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair } from '../../src/core/keys.js';
import { CertificateError, issueCertificate, parseCertificate } from '../../src/evidence/certificate.js';
import { certificatePolicy, judgeCall, normalizeCall } from '../../src/evidence/policy/judge.js';
import { BYPASSES, HARMLESS } from './policy/code-strings.js';

const ship = generateKeyPair();
const request = (opaqueShell?: string) => ({
  name: 'coder',
  allow: ['Bash'],
  forbid: ['Bash(rm -rf *)'],
  validFrom: new Date('2026-01-01T00:00:00Z'),
  validUntil: new Date('2026-02-01T00:00:00Z'),
  ...(opaqueShell === undefined ? {} : { opaqueShell: opaqueShell as 'ask' | 'deny' }),
});

test('opaque_shell: ask and deny are issued as given, absent stays absent', () => {
  assert.equal('opaque_shell' in issueCertificate(request(), ship.privateKey).certificate, false);
  for (const value of ['ask', 'deny']) {
    const { certificate } = issueCertificate(request(value), ship.privateKey);
    assert.equal(certificate.opaque_shell, value);
    assert.equal(parseCertificate(JSON.parse(JSON.stringify(certificate))).opaque_shell, value);
  }
});

test('opaque_shell: any other value makes the certificate invalid, issued or parsed', () => {
  const isInvalid = (error: unknown) =>
    error instanceof CertificateError && error.code === 'invalid' && error.detail?.field === '/opaque_shell';
  assert.throws(() => issueCertificate(request('allow'), ship.privateKey), isInvalid);
  const { certificate } = issueCertificate(request('deny'), ship.privateKey);
  for (const value of ['allow', 'DENY', 1, null]) {
    assert.throws(() => parseCertificate({ ...certificate, opaque_shell: value }), isInvalid);
  }
});

test('a certificate forbidding writes under secret/, opaque_shell deny, denies each builtin bypass', () => {
  const { certificate } = issueCertificate(
    { ...request('deny'), allow: ['Bash', 'Edit(*)'], forbid: ['Write(secret/**)'] },
    ship.privateKey,
  );
  const policy = certificatePolicy(parseCertificate(JSON.parse(JSON.stringify(certificate))));
  const root = '/home/user/project';
  const judge = (command: string) => {
    const event = { tool: { name: 'Bash', input: { command } }, session: { cwd: root } };
    const call = normalizeCall(event, { root, cwd: root });
    assert.ok(call !== undefined);
    return judgeCall(policy, call);
  };
  for (const { command } of BYPASSES) assert.equal(judge(command).verdict, 'forbidden', command);
  for (const command of HARMLESS) assert.equal(judge(command).verdict, 'allowed', command);
  const patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: secret/x\u2028\n+x\n*** End Patch\nEOF";
  assert.equal(judge(patch).verdict, 'forbidden');
  assert.equal(judge(`bash -lc "${patch}"`).verdict, 'forbidden');
});
