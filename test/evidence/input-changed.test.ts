/**
 * The call that ran is the call that was judged. Oracles, from the security requirements: a
 * `tool.after` whose input differs from its `tool.before` (same call id) is flagged `input_changed`;
 * the executed input is judged too; cross-verification counts a call by everything it reported, so
 * `tool.before ls` + `tool.after rm -rf /` under a certificate forbidding `Bash(rm -rf *)` counts an
 * unauthorized call and the receipt does not list only `ls`. One row per kind of input.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import type { Envelope } from '../../src/core/dsse.js';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { type CheckResult, verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, openSession, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import {
  type Fixture,
  makeFixture,
  packageLines,
  runSession,
  steppingClock,
  toolAfter,
  toolBefore,
} from '../session/fixture.js';
import { removeTempDir } from '../temp.js';

let fx: Fixture;
let certificate: Envelope;
let certPath: string;
const NOW = new Date('2026-06-01T00:00:00Z');

interface Row {
  name: string;
  before: [tool: string, input: Record<string, unknown>, kind: string];
  after: [tool: string, input: Record<string, unknown>, kind: string];
  /** The verdict of the worst input the call reported (docs/policy.md), by hand. */
  verdict: 'forbidden' | 'outside' | 'allowed';
}

const rows = (root: string): Row[] => [
  {
    name: 'shell command',
    before: ['Bash', { command: 'ls' }, 'shell'],
    after: ['Bash', { command: 'rm -rf /' }, 'shell'],
    verdict: 'forbidden',
  },
  {
    name: 'read path',
    before: ['Read', { file_path: join(root, 'README.md') }, 'read'],
    after: ['Read', { file_path: join(root, '.env') }, 'read'],
    verdict: 'forbidden',
  },
  {
    name: 'edit path',
    before: ['Edit', { file_path: join(root, 'src/app.js'), old_string: '1', new_string: '2' }, 'edit'],
    after: ['Edit', { file_path: '/etc/passwd', old_string: '1', new_string: '2' }, 'edit'],
    verdict: 'outside',
  },
  {
    name: 'fetched URL',
    before: ['WebFetch', { url: 'https://example.com/a', prompt: 'x' }, 'fetch'],
    after: ['WebFetch', { url: 'https://evil.example/a', prompt: 'x' }, 'fetch'],
    verdict: 'forbidden',
  },
  {
    name: 'tool name',
    before: ['Read', { file_path: join(root, 'README.md') }, 'read'],
    after: ['Bash', { command: 'rm -rf /' }, 'shell'],
    verdict: 'forbidden',
  },
  {
    name: 'unchanged input (control)',
    before: ['Bash', { command: 'ls -la' }, 'shell'],
    after: ['Bash', { command: 'ls -la' }, 'shell'],
    verdict: 'allowed',
  },
];

function records(bytes: Buffer): Array<{ seq: number; event: { type: string }; flags?: string[] }> {
  const lines = packageLines(bytes);
  return lines.slice(1, -1).map((line) => {
    const envelope = JSON.parse(line.toString()) as { payload: string };
    return JSON.parse(Buffer.from(envelope.payload, 'base64').toString());
  });
}

function check(checks: CheckResult[], name: string): CheckResult & { detail: Record<string, unknown> } {
  const found = checks.find((c) => c.check === name);
  assert.ok(found, `no ${name} check`);
  return found as CheckResult & { detail: Record<string, unknown> };
}

before(async () => {
  fx = await makeFixture('tally-changed-');
  certificate = issueCertificate(
    {
      name: 'coder',
      allow: ['Read', 'Edit(src/**)', 'Bash(ls*)', 'WebFetch(domain:example.com)'],
      forbid: ['Bash(rm -rf *)', 'Read(.env)', 'WebFetch(domain:evil.example)'],
      escalate: [],
      validFrom: new Date('2026-01-01T00:00:00Z'),
      validUntil: new Date('2027-01-01T00:00:00Z'),
    },
    fx.signer.privateKey,
  ).envelope;
  certPath = join(fx.dir, 'coder.agent.json');
  writeFileSync(certPath, `${canonicalize(certificate)}\n`);
});

after(() => removeTempDir(fx.dir));

describe('a tool.after that reports another input than its tool.before', () => {
  for (const row of rows('/ROOT')) {
    it(`${row.name}: flagged live, judged by what ran, counted by the verifier`, async () => {
      const r = rows(fx.root).find((x) => x.name === row.name)!;
      const clock = steppingClock('2026-03-01T09:00:00Z');
      const { info } = await startSession({
        state: fx.state,
        root: fx.root,
        signer: fx.signer,
        certificatePath: certPath,
        clock,
      });
      // Held open as the recorder holds a session: the boundary sees the before and then the after.
      const held = await openSession({
        state: fx.state,
        session: readSessionInfo(fx.state, info.id),
        signer: fx.signer,
        clock,
      });
      try {
        const decision = await held.boundary.decide(toolBefore('c1', ...r.before), { source: 'hook' });
        assert.equal(decision.decision, 'allow', 'the call as announced is allowed');
        await held.boundary.observe(toolAfter('c1', ...r.after), { source: 'hook' });
      } finally {
        await held.close();
      }
      const closed = await closeSession({
        state: fx.state,
        session: readSessionInfo(fx.state, info.id),
        signer: fx.signer,
        clock,
      });
      const bytes = readFileSync(closed.packagePath);
      const afterRecord = records(bytes).find((x) => x.event.type === 'tool.after')!;
      if (r.verdict === 'allowed') assert.equal(afterRecord.flags, undefined);
      else assert.deepEqual(afterRecord.flags, ['input_changed']);

      const result = await verifyPackage(bytes, {
        trusted: [fx.signer.key.publicKey],
        certificate,
        now: NOW,
      });
      const unauthorized = check(result.checks, 'unauthorized_calls');
      const calls = unauthorized.detail.calls as Array<Record<string, unknown>>;
      if (r.verdict === 'allowed') {
        assert.equal(unauthorized.ok, true);
        assert.deepEqual(calls, []);
      } else {
        assert.equal(unauthorized.ok, false, 'the executed input is an unauthorized call');
        assert.equal(unauthorized.code, 'unauthorized');
        assert.equal(calls.length, 1);
        assert.equal(calls[0]!.verdict, r.verdict);
        assert.equal(calls[0]!.tool, r.after[0]);
        assert.equal(calls[0]!.input_changed, true);
        assert.equal(calls[0]!.blocked, false);
      }
    });
  }

  it('the verifier does not rest on the flag: a session recorded one event per process is counted the same', async () => {
    const events = [
      toolBefore('c1', 'Bash', { command: 'ls' }, 'shell'),
      toolAfter('c1', 'Bash', { command: 'rm -rf /' }, 'shell'),
    ];
    const run = await runSession(fx, events, {
      clock: steppingClock('2026-03-02T09:00:00Z'),
      certificatePath: certPath,
    });
    const result = await verifyPackage(run.bytes, {
      trusted: [fx.signer.key.publicKey],
      certificate,
      now: NOW,
    });
    assert.equal(result.ok, false);
    assert.equal(check(result.checks, 'unauthorized_calls').code, 'unauthorized');
    // The receipt shows what ran, not only what was announced.
    const receipt = JSON.stringify(result.receipt);
    assert.ok(receipt.includes('rm -rf /'), 'the receipt lists the executed command');
  });
});
