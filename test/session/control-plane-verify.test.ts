/**
 * The control plane's places outside the project — the user's home and the Tally home — are
 * recorded in the signed `session.start`, and the live judge and the verifier both read them from
 * there: a write into `~/.codex/` is asked live and is an escalation offline (run after the
 * harness asked: approved as the harness says); a write through a link into `.claude/` likewise.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import type { Envelope } from '../../src/core/dsse.js';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { type Fixture, makeFixture, packageRecords, runSession, toolAfter, toolBefore } from './fixture.js';

let fx: Fixture;
let certificate: Envelope;
let certificatePath: string;

before(async () => {
  fx = await makeFixture('tally-plane-');
  certificate = issueCertificate(
    {
      name: 'coder',
      allow: ['Write', 'Bash'],
      validFrom: new Date(Date.now() - 3_600_000),
      validUntil: new Date(Date.now() + 3_600_000),
    },
    fx.signer.privateKey,
  ).envelope;
  certificatePath = join(fx.dir, 'coder.agent.json');
  writeFileSync(certificatePath, `${canonicalize(certificate)}\n`);
});

/** Runs the calls (before, then after: each ran) in a session whose home is `home`. */
async function session(home: string, calls: [string, string, Record<string, unknown>][]) {
  const events = calls.flatMap(([id, name, input]) =>
    [toolBefore(id, name, input), toolAfter(id, name, input)].map((e) => ({
      ...e,
      session: { id: 'agent', cwd: fx.root },
    })),
  );
  const run = await runSession(fx, events, { certificatePath, home });
  const result = await verifyPackage(run.bytes, {
    trusted: [fx.signer.key.publicKey],
    certificate,
    now: new Date(),
  });
  const records = packageRecords(fx, run.bytes);
  const decisions = records
    .filter((r) => r.event.type === 'tool.before')
    .map((r) => r.decision?.decision ?? 'none');
  return { decisions, result, records };
}

/** The calls the `escalations` check lists: those the verifier judged to need escalation. */
function escalatedCalls(
  result: Awaited<ReturnType<typeof verifyPackage>>,
): { tool: string; approval?: string }[] {
  const check = result.checks.find((c) => c.check === 'escalations');
  const detail = check?.detail as { calls?: { tool: string; approval?: string }[] } | undefined;
  return detail?.calls ?? [];
}

describe('the control plane, recorded and re-judged', () => {
  it('the home the start recorded is where ~/.codex/ is, live and offline', async () => {
    const home = join(fx.dir, 'home');
    mkdirSync(join(home, '.codex'), { recursive: true });
    const { decisions, result, records } = await session(home, [
      ['p1', 'Write', { file_path: join(home, '.codex', 'config.toml'), content: '' }],
      ['p2', 'Bash', { command: 'echo x > ~/.codex/hooks.json' }],
      ['p3', 'Write', { file_path: join(home, 'notes.txt'), content: '' }],
    ]);
    const extensions = records[0]?.event.extensions as Record<string, Record<string, unknown>> | undefined;
    assert.equal(extensions?.['dev.tally.workspace']?.home, home);
    assert.deepEqual(decisions, ['ask', 'ask', 'allow']);
    const escalated = escalatedCalls(result);
    assert.deepEqual(
      escalated.map((c) => c.tool),
      ['Write', 'Bash'],
    );
    assert.ok(escalated.every((c) => c.approval === 'harness'));
  });

  it('a write through a link into .claude/ is asked live and an escalation offline', async () => {
    mkdirSync(join(fx.root, '.claude'), { recursive: true });
    symlinkSync(join(fx.root, '.claude'), join(fx.root, 'cfg'));
    const { decisions, result } = await session(join(fx.dir, 'home'), [
      ['l1', 'Write', { file_path: 'cfg/settings.json', content: '{}' }],
      ['l2', 'Bash', { command: 'cp /dev/null cfg/settings.local.json' }],
    ]);
    assert.deepEqual(decisions, ['ask', 'ask']);
    const escalated = escalatedCalls(result);
    assert.deepEqual(
      escalated.map((c) => c.tool),
      ['Write', 'Bash'],
    );
    assert.ok(escalated.every((c) => c.approval === 'harness'));
  });
});
