/**
 * Cross-verification judges each call where it ran, as the live judge did: a shell command's
 * relative paths from its event's own `session.cwd` (where Codex, and the Gemini CLI, Qwen Code and
 * OpenCode adapters for a shell tool's directory argument, say the command ran), and a call its
 * record marks opaque (`extensions["dev.tally.opaque"]`) as opaque. Oracle: bash, which runs
 * `echo x > gm.txt` in the directory it is started in, and docs/policy.md's opaque rule.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import type { Envelope } from '../../src/core/dsse.js';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import {
  type Fixture,
  makeFixture,
  runSession,
  steppingClock,
  toolAfter,
  toolBefore,
} from '../session/fixture.js';

let fx: Fixture;
let certificate: Envelope;

before(async () => {
  fx = await makeFixture('tally-cross-cwd-');
  certificate = issueCertificate(
    {
      name: 'coder',
      allow: ['Write(*.txt)', 'Edit(*.txt)', 'Bash(echo *)'],
      forbid: ['Write(protected/**)', 'Write(secret.txt)'],
      validFrom: new Date('2026-01-01T00:00:00Z'),
      validUntil: new Date('2027-01-01T00:00:00Z'),
    },
    fx.signer.privateKey,
  ).envelope;
  writeFileSync(join(fx.dir, 'coder.agent.json'), `${canonicalize(certificate)}\n`);
});

/** A shell call that ran (before and after) in `cwd`, with extensions of its own. */
function ran(id: string, cwd: string, extensions: Record<string, unknown> = {}) {
  const input = { command: 'echo x > gm.txt', dir_path: cwd };
  const session = { id: 'gemini-session', cwd };
  return [
    { ...toolBefore(id, 'run_shell_command', input), session, extensions },
    { ...toolAfter(id, 'run_shell_command', input), session, extensions },
  ];
}

async function unauthorized(events: unknown[]) {
  const run = await runSession(fx, events, { clock: steppingClock('2026-03-01T09:00:00Z') });
  const result = await verifyPackage(run.bytes, {
    trusted: [fx.signer.key.publicKey],
    certificate,
    now: new Date('2026-06-01T00:00:00Z'),
  });
  const check = result.checks.find((c) => c.check === 'unauthorized_calls');
  const escalations = result.checks.find((c) => c.check === 'escalations');
  return { unauthorized: check, escalations };
}

describe('cross-verification reads each call where it ran', () => {
  it('a redirection that ran in protected/ is a forbidden write that ran', async () => {
    const { unauthorized: check } = await unauthorized(ran('g1', join(fx.root, 'protected')));
    assert.equal(check?.ok, false, JSON.stringify(check));
    const detail = check?.detail as { calls: { verdict: string; pattern?: string; blocked: boolean }[] };
    const calls = detail.calls;
    assert.deepEqual(
      calls.map((c) => [c.verdict, c.pattern, c.blocked]),
      [['forbidden', 'Write(protected/**)', false]],
    );
  });

  it('the same command in the project directory is allowed', async () => {
    const { unauthorized: check } = await unauthorized(ran('g2', fx.root));
    assert.equal(check?.ok, true, JSON.stringify(check));
  });

  it('a call its record marks opaque is an escalation that ran unapproved', async () => {
    const opaque = { 'dev.tally.opaque': "run_shell_command's dir_path 5 is not a directory Tally can read" };
    const { escalations } = await unauthorized(ran('g3', fx.root, opaque));
    assert.equal(escalations?.ok, false, JSON.stringify(escalations));
  });
});
