/**
 * Cross-verification across agents: a certificate in Claude Code's tool names judges sessions
 * recorded with Codex and Gemini CLI names (the alias table, docs/policy.md). Oracles: the issue's
 * definitions of unauthorized_calls (outside bounded_actions or forbidden; blocked when denied),
 * escalations (approved when an allow was recorded) and never_called, applied by hand to the events.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import type { Envelope } from '../../src/core/dsse.js';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { type CheckedRecord, readLogLines, verifyLogFile } from '../../src/evidence/log/reader.js';
import { LogWriter } from '../../src/evidence/log/writer.js';
import { buildPackage } from '../../src/evidence/package/build.js';
import { type CheckResult, type VerifyResult, verifyPackage } from '../../src/evidence/package/verify.js';
import {
  type Fixture,
  makeFixture,
  permissionResolved,
  runSession,
  steppingClock,
  toolAfter,
  toolBefore,
} from '../session/fixture.js';

const ALLOW = ['Read', 'Edit(src/**)', 'Write(src/**)', 'Bash(git status*)', 'Bash(npm test*)', 'Grep'];

let fx: Fixture;
let certificate: Envelope;
let certPath: string;

before(async () => {
  fx = await makeFixture('tally-cross-');
  certificate = issueCertificate(
    {
      name: 'coder',
      allow: ALLOW,
      forbid: ['Bash(rm -rf *)'],
      escalate: ['Bash(git push*)'],
      validFrom: new Date('2026-01-01T00:00:00Z'),
      validUntil: new Date('2027-01-01T00:00:00Z'),
    },
    fx.signer.privateKey,
  ).envelope;
  certPath = join(fx.dir, 'coder.agent.json');
  writeFileSync(certPath, `${canonicalize(certificate)}\n`);
});

async function verifyWithCertificate(bytes: Buffer): Promise<VerifyResult> {
  return verifyPackage(bytes, {
    trusted: [fx.signer.key.publicKey],
    certificate,
    now: new Date('2026-06-01T00:00:00Z'),
  });
}

function check(result: VerifyResult, name: string): CheckResult & { detail: Record<string, unknown> } {
  const found = result.checks.find((c) => c.check === name);
  assert.ok(found, `no ${name} check`);
  return found as CheckResult & { detail: Record<string, unknown> };
}

interface Listed {
  seq: number;
  tool: string;
  verdict?: string;
  blocked: boolean;
  approved?: boolean;
}

const clock = () => steppingClock('2026-03-01T09:00:00Z');

describe('cross-verification across agents', () => {
  it('Codex and Gemini names are judged by a certificate written in Claude Code names', async () => {
    const r = fx.root;
    const events = [
      toolBefore('a1', 'exec_command', { cmd: 'git status --short' }), // Codex
      toolBefore('a2', 'run_shell_command', { command: 'git status' }), // Gemini CLI
      toolBefore('a3', 'write_file', { file_path: join(r, 'src/new.js'), content: 'x' }), // Gemini
      toolBefore('a4', 'read_file', { absolute_path: join(r, 'README.md') }), // Gemini
      toolBefore('a5', 'replace', { file_path: join(r, 'src/app.js'), old_string: '1', new_string: '2' }),
    ];
    const run = await runSession(fx, events, { clock: clock(), certificatePath: certPath });
    const result = await verifyWithCertificate(run.bytes);
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    const unauthorized = check(result, 'unauthorized_calls');
    assert.equal(unauthorized.detail.count, 0);
    // The five calls used Bash(git status*) (twice), Write(src/**), Read and Edit(src/**).
    const never = check(result, 'never_called');
    assert.equal(never.code, 'info');
    assert.deepEqual(never.detail.patterns, ['Bash(npm test*)', 'Grep']);
  });

  it('outside and forbidden calls that were denied are listed as blocked and pass', async () => {
    const r = fx.root;
    const events = [
      toolBefore('b1', 'write_file', { file_path: join(r, 'docs/x.md'), content: 'x' }), // outside
      toolBefore('b2', 'run_shell_command', { command: 'rm -rf build' }), // forbidden
      toolBefore('b3', 'exec_command', { cmd: 'git status && rm -rf /' }), // forbidden inside a chain
    ];
    const run = await runSession(fx, events, { clock: clock(), certificatePath: certPath });
    const result = await verifyWithCertificate(run.bytes);
    const unauthorized = check(result, 'unauthorized_calls');
    assert.equal(unauthorized.ok, true, JSON.stringify(unauthorized));
    const calls = unauthorized.detail.calls as Listed[];
    assert.deepEqual(
      calls.map((c) => [c.seq, c.tool, c.verdict, c.blocked]),
      [
        [run.seqs[0], 'write_file', 'outside', true],
        [run.seqs[1], 'run_shell_command', 'forbidden', true],
        [run.seqs[2], 'exec_command', 'forbidden', true],
      ],
    );
  });

  it('forbidden and outside calls that ran fail unauthorized_calls with their count and list', async () => {
    // No certificate at recording time: nothing was denied, so the calls ran.
    const events = [
      toolBefore('c1', 'run_shell_command', { command: 'rm -rf build' }),
      toolBefore('c2', 'exec_command', { cmd: 'curl https://example.com' }),
      toolBefore('c3', 'read_file', { absolute_path: join(fx.root, 'README.md') }),
    ];
    const run = await runSession(fx, events, { clock: clock() });
    const result = await verifyWithCertificate(run.bytes);
    assert.equal(result.ok, false);
    const unauthorized = check(result, 'unauthorized_calls');
    assert.equal(unauthorized.ok, false);
    assert.equal(unauthorized.code, 'unauthorized');
    assert.equal(unauthorized.detail.count, 2);
    assert.equal(unauthorized.detail.executed, 2);
    assert.deepEqual(
      (unauthorized.detail.calls as Listed[]).map((c) => [c.seq, c.verdict, c.blocked]),
      [
        [run.seqs[0], 'forbidden', false],
        [run.seqs[1], 'outside', false],
      ],
    );
    // The records themselves are fine: only the certificate checks say no.
    for (const name of ['record_signatures', 'receipt_recomputed', 'ship_id_match'])
      assert.equal(check(result, name).ok, true, name);
  });

  it('a denied call that a tool.after shows executing anyway is not blocked', async () => {
    const input = { command: 'rm -rf build' };
    const events = [
      toolBefore('d1', 'run_shell_command', input),
      toolAfter('d1', 'run_shell_command', input),
    ];
    const run = await runSession(fx, events, { clock: clock(), certificatePath: certPath });
    const result = await verifyWithCertificate(run.bytes);
    const unauthorized = check(result, 'unauthorized_calls');
    assert.equal(unauthorized.ok, false);
    assert.deepEqual(
      (unauthorized.detail.calls as Listed[]).map((c) => c.blocked),
      [false],
    );
  });

  it('calls seen only through their tool.after are judged too', async () => {
    const rm = { command: 'rm -rf /' };
    const write = { file_path: '/etc/passwd', content: 'x' };
    const events = [
      toolAfter('a1', 'run_shell_command', rm),
      toolAfter('a2', 'write_file', write),
      toolBefore('a3', 'read_file', { file_path: join(fx.root, 'README.md') }),
      toolAfter('a3', 'read_file', { file_path: join(fx.root, 'README.md') }),
    ];
    const run = await runSession(fx, events, { clock: clock() });
    const result = await verifyWithCertificate(run.bytes);
    const unauthorized = check(result, 'unauthorized_calls');
    assert.equal(unauthorized.ok, false);
    const listed = unauthorized.detail.calls as Listed[];
    // rm -rf is forbidden, a write outside src/ is outside the envelope; the read is allowed, once.
    assert.deepEqual(
      listed.map((c) => [c.tool, c.verdict, c.blocked]),
      [
        ['run_shell_command', 'forbidden', false],
        ['write_file', 'outside', false],
      ],
    );
    assert.equal(unauthorized.detail.count, 2);
  });

  it('escalations: approved by tool.permission.resolved allow, unapproved otherwise', async () => {
    const push = (id: string, cmd: string) => toolBefore(id, 'exec_command', { cmd });
    const events = [
      push('e1', 'git push origin main'),
      permissionResolved('e1', 'exec_command', { cmd: 'git push origin main' }, 'allow'),
      push('e2', 'git push --force'),
      permissionResolved('e2', 'exec_command', { cmd: 'git push --force' }, 'deny'),
      push('e3', 'git push origin dev'),
      permissionResolved('zz', 'exec_command', { cmd: 'git push origin dev' }, 'allow'), // other call id
    ];
    // Recorded without a certificate, so no policy deny stops them: they ran.
    const run = await runSession(fx, events, { clock: clock() });
    const result = await verifyWithCertificate(run.bytes);
    const escalations = check(result, 'escalations');
    assert.equal(escalations.ok, false);
    assert.equal(escalations.code, 'unapproved-escalation');
    assert.equal(escalations.detail.count, 3);
    assert.equal(escalations.detail.unapproved, 2);
    assert.deepEqual(
      (escalations.detail.calls as Listed[]).map((c) => [c.seq, c.approved]),
      [
        [run.seqs[0], true],
        [run.seqs[2], false],
        [run.seqs[4], false],
      ],
    );
    // Escalation is not a violation of the envelope.
    assert.equal(check(result, 'unauthorized_calls').ok, true);
  });

  it('an escalation approved by a person’s recorded allow decision passes', async () => {
    // A record written by another decider (e.g. a person at an AHP prompt): decision allow by "user".
    const session = 'ses_20260301T090000Z_cafe0001';
    const path = join(fx.dir, `${session}.log`);
    const times = clock();
    const log = await LogWriter.open(path, { session, signer: fx.signer, now: () => times.now() });
    const base = { time: '2026-03-01T09:00:00.000Z', source: 'urn:test', session: { id: session } };
    await log.append({
      source: 'cli',
      event: { ...base, id: 'ev0', type: 'session.start', trigger: 'startup' } as never,
    });
    const call = toolBefore('p1', 'Bash', { command: 'git push origin main' }, 'shell');
    await log.append({
      source: 'ahp',
      event: { ...base, id: 'ev1', ...call } as never,
      decision: { decision: 'allow', by: 'user', reason: 'approved at the prompt' },
    });
    const pending = toolBefore('p2', 'Bash', { command: 'git push origin dev' }, 'shell');
    await log.append({
      source: 'ahp',
      event: { ...base, id: 'ev2', ...pending } as never,
      decision: { decision: 'ask', by: 'tally-policy', rule: 'Bash(git push*)' },
    });
    await log.close();
    const checked: CheckedRecord[] = [];
    await verifyLogFile(path, { trusted: [fx.signer.privateKey], onRecord: (c) => checked.push(c) });
    const lines: Buffer[] = [];
    for await (const { line } of readLogLines(path)) lines.push(Buffer.from(line));
    const { bytes } = buildPackage(lines, checked, fx.signer);
    const result = await verifyWithCertificate(bytes);
    const escalations = check(result, 'escalations');
    assert.deepEqual(
      (escalations.detail.calls as Listed[]).map((c) => [c.seq, c.approved]),
      [
        [1, true],
        [2, false],
      ],
    );
    assert.equal(escalations.ok, false, 'the ask by Tally’s own policy is not an approval');
  });

  it('never_called lists every allowed pattern when no tool was called', async () => {
    const run = await runSession(fx, [], { clock: clock() });
    const result = await verifyWithCertificate(run.bytes);
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    assert.deepEqual(check(result, 'never_called').detail.patterns, ALLOW);
    assert.equal(check(result, 'unauthorized_calls').detail.count, 0);
    assert.equal(check(result, 'escalations').detail.count, 0);
  });
});
