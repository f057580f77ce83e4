/**
 * The certificate is bound to the session. Oracles, from the security requirements: session.start
 * records the certificate's digest (SHA-256 of the envelope's canonical JSON, docs/formats.md); the
 * live judge uses only that certificate, so copying another one over the session's copy mid-session
 * never changes the live policy; `verify --certificate C` fails `certificate_bound` when C is not the
 * session's certificate; a certificate outside its validity window denies every call live.
 */
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { canonicalBytes, canonicalize } from '../../src/core/canonical.js';
import type { Envelope } from '../../src/core/dsse.js';
import { sha256 } from '../../src/core/hash.js';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { type CheckResult, type VerifyResult, verifyPackage } from '../../src/evidence/package/verify.js';
import { openSession, recordEvent, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { removeTempDir } from '../temp.js';
import { type Fixture, makeFixture, packageLines, runSession, steppingClock, toolBefore } from './fixture.js';

let fx: Fixture;
let strict: Envelope;
let loose: Envelope;
let strictPath: string;
let loosePath: string;

const NOW = new Date('2026-06-01T00:00:00Z');

function issue(name: string, allow: string[], forbid: string[], from: string, until: string): Envelope {
  return issueCertificate(
    { name, allow, forbid, escalate: [], validFrom: new Date(from), validUntil: new Date(until) },
    fx.signer.privateKey,
  ).envelope;
}

function write(name: string, envelope: Envelope): string {
  const path = join(fx.dir, `${name}.agent.json`);
  writeFileSync(path, `${canonicalize(envelope)}\n`);
  return path;
}

function check(result: VerifyResult, name: string): CheckResult {
  const found = result.checks.find((c) => c.check === name);
  assert.ok(found, `no ${name} check`);
  return found;
}

before(async () => {
  fx = await makeFixture('tally-bound-');
  strict = issue(
    'coder',
    ['Read', 'Bash(ls*)'],
    ['Bash(rm -rf *)'],
    '2026-01-01T00:00:00Z',
    '2027-01-01T00:00:00Z',
  );
  loose = issue('coder', ['Read', 'Bash'], [], '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z');
  strictPath = write('strict', strict);
  loosePath = write('loose', loose);
});

after(() => removeTempDir(fx.dir));

describe('certificate bound to the session', () => {
  it('session.start records the digest of the certificate envelope', async () => {
    const run = await runSession(fx, [], {
      clock: steppingClock('2026-03-01T09:00:00Z'),
      certificatePath: strictPath,
    });
    const first = JSON.parse(packageLines(run.bytes)[1]!.toString()) as { payload: string };
    const record = JSON.parse(Buffer.from(first.payload, 'base64').toString()) as {
      event: { type: string };
      binding?: { certificate?: { digest: string } };
    };
    assert.equal(record.event.type, 'session.start');
    assert.equal(
      record.binding?.certificate?.digest,
      `sha256:${sha256(canonicalBytes(strict)).toString('hex')}`,
    );
  });

  it('verifies against its own certificate and fails certificate_bound against another of the same ship', async () => {
    const events = [toolBefore('c1', 'Bash', { command: 'rm -rf build' }, 'shell')];
    const run = await runSession(fx, events, {
      clock: steppingClock('2026-03-01T10:00:00Z'),
      certificatePath: strictPath,
    });
    const own = await verifyPackage(run.bytes, {
      trusted: [fx.signer.key.publicKey],
      certificate: strict,
      now: NOW,
    });
    assert.equal(check(own, 'certificate_bound').code, 'ok');
    assert.equal(check(own, 'certificate_bound').ok, true);
    const other = await verifyPackage(run.bytes, {
      trusted: [fx.signer.key.publicKey],
      certificate: loose,
      now: NOW,
    });
    const bound = check(other, 'certificate_bound');
    assert.equal(bound.ok, false);
    assert.equal(bound.code, 'other-certificate');
    assert.equal(other.ok, false);
    // Under the permissive certificate alone the call would have looked authorized: only the binding catches it.
    assert.equal(check(other, 'unauthorized_calls').ok, true);
  });

  it('a session that bound no certificate is reported as such, not failed', async () => {
    const run = await runSession(fx, [], { clock: steppingClock('2026-03-01T11:00:00Z') });
    const result = await verifyPackage(run.bytes, {
      trusted: [fx.signer.key.publicKey],
      certificate: loose,
      now: NOW,
    });
    const bound = check(result, 'certificate_bound');
    assert.equal(bound.ok, true);
    assert.equal(bound.code, 'info');
  });

  it('copying another certificate over the session copy mid-session does not change the live policy', async () => {
    const { info } = await startSession({
      state: fx.state,
      root: fx.root,
      signer: fx.signer,
      certificatePath: strictPath,
    });
    // A held session (as the recorder holds it) keeps judging by the certificate it was bound to.
    const held = await openSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    try {
      copyFileSync(loosePath, info.certificate!);
      const decision = await held.boundary.decide(
        toolBefore('c1', 'Bash', { command: 'rm -rf /' }, 'shell'),
        {
          source: 'hook',
        },
      );
      assert.equal(decision.decision, 'deny');
      const outside = await held.boundary.decide(
        toolBefore('c2', 'Bash', { command: 'curl example.com' }, 'shell'),
        {
          source: 'hook',
        },
      );
      assert.equal(outside.decision, 'deny', 'a call outside the strict envelope stays denied');
    } finally {
      await held.close();
    }
    // A fresh open (one event per process) refuses the swapped copy instead of judging by it.
    await assert.rejects(
      recordEvent({
        state: fx.state,
        session: readSessionInfo(fx.state, info.id),
        signer: fx.signer,
        event: toolBefore('c3', 'Bash', { command: 'rm -rf /' }, 'shell'),
        source: 'hook',
      }),
      (error: Error & { code?: string }) =>
        error.code === 'corrupt' && /not the one it started under/.test(error.message),
    );
  });

  for (const [state, from, until] of [
    ['expired', '2025-01-01T00:00:00Z', '2025-06-01T00:00:00Z'],
    ['not yet valid', '2099-01-01T00:00:00Z', '2099-06-01T00:00:00Z'],
  ] as const) {
    it(`a certificate that is ${state} denies every call live (fail closed)`, async () => {
      const path = write(`window-${from}`, issue('coder', ['Read', 'Bash'], [], from, until));
      const { info } = await startSession({
        state: fx.state,
        root: fx.root,
        signer: fx.signer,
        certificatePath: path,
      });
      for (const event of [
        toolBefore('r1', 'Read', { file_path: join(fx.root, 'README.md') }, 'read'),
        toolBefore('b1', 'Bash', { command: 'ls' }, 'shell'),
      ]) {
        const result = await recordEvent({
          state: fx.state,
          session: readSessionInfo(fx.state, info.id),
          signer: fx.signer,
          event,
          source: 'hook',
        });
        assert.equal(result.decision?.decision, 'deny', `${state}: ${JSON.stringify(event.tool)}`);
      }
    });
  }
});

describe('tally verify --certificate', () => {
  it('exits 1 with certificate_bound failing for a certificate the session did not run under', async () => {
    const p = makeProject('tally-bound-cli-');
    try {
      const run = async (args: string[], stdin?: string) =>
        p.tally(args, stdin === undefined ? {} : { stdin });
      assert.equal((await run(['init'])).code, 0);
      const day = 86_400_000;
      const window = [
        '--valid-from',
        new Date(Date.now() - day).toISOString(),
        '--valid-until',
        new Date(Date.now() + day).toISOString(),
      ];
      let ran = await run([
        'agent',
        'register',
        '--name',
        'strict',
        '--allow',
        'Read',
        '--forbid',
        'Bash(rm -rf *)',
        ...window,
      ]);
      assert.equal(ran.code, 0, ran.stderr);
      ran = await run([
        'agent',
        'register',
        '--name',
        'loose',
        '--allow',
        'Read',
        '--allow',
        'Bash',
        ...window,
      ]);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal((await run(['session', 'start', '--agent', 'strict'])).code, 0);
      const closed = await run(['session', 'close', '--json']);
      assert.equal(closed.code, 0, closed.stderr);
      const pkg = jsonOut(closed).package as string;
      const own = await run(['verify', pkg, '--certificate', 'strict', '--json']);
      assert.equal(own.code, 0, own.stdout);
      const other = await run(['verify', pkg, '--certificate', 'loose', '--json']);
      assert.equal(other.code, 1);
      const failing = (jsonOut(other).checks as CheckResult[]).filter((c) => !c.ok && c.code !== 'skipped');
      assert.deepEqual(
        failing.map((c) => [c.check, c.code]),
        [['certificate_bound', 'other-certificate']],
      );
    } finally {
      removeTempDir(p.dir);
    }
  });
});
