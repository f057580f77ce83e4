/**
 * Cross-verification across agents: a certificate in Claude Code's tool names judges sessions
 * recorded with Codex and Gemini CLI names (the alias table, docs/policy.md). Oracles: the issue's
 * definitions of unauthorized_calls (outside bounded_actions or forbidden; blocked when denied),
 * escalations (approved only by a signed approval or the harness running the asked call) and
 * never_called, applied by hand to the events.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import type { Envelope } from '../../src/core/dsse.js';
import { generateKeyPair } from '../../src/core/keys.js';
import { approvedInputDigest, signApproval } from '../../src/evidence/approval.js';
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

  it('escalations: only a signed approval or the harness running the asked call approve; the agent’s own channel does not', async () => {
    const { privateKey: approverKey, publicKey: approverPub } = generateKeyPair();
    const session = 'ses_20260301T090000Z_cafe0002';
    const path = join(fx.dir, `${session}.log`);
    const times = clock();
    const log = await LogWriter.open(path, { session, signer: fx.signer, now: () => times.now() });
    const base = { time: '2026-03-01T09:00:00.000Z', source: 'urn:test', session: { id: session } };
    let n = 0;
    const append = (
      event: Record<string, unknown>,
      decision?: { decision: 'allow' | 'deny' | 'ask'; by: string },
    ) =>
      log.append({
        source: 'hook',
        event: { ...base, id: `ev${n++}`, ...event } as never,
        ...(decision ? { decision } : {}),
      });
    const ask = { decision: 'ask' as const, by: 'dev.tally.certificate' };
    const push = (id: string, branch: string) =>
      toolBefore(id, 'Bash', { command: `git push origin ${branch}` }, 'shell');
    const ran = (id: string, branch: string) =>
      toolAfter(id, 'Bash', { command: `git push origin ${branch}` }, 'shell');
    await append({ type: 'session.start', trigger: 'startup' });
    // p1: no ask was recorded; the agent's own channel claims a person allowed it, and it ran. Not an approval.
    await append(push('p1', 'a'));
    await append(permissionResolved('p1', 'Bash', { command: 'git push origin a' }, 'allow'));
    await append(ran('p1', 'a'));
    // p2: signed by a pinned approver key; it ran. Approved (approver).
    await append(push('p2', 'b'), ask);
    const { envelope } = signApproval(
      { session, call: 'p2', decision: 'allow', time: base.time },
      approverKey,
    );
    await append({ type: 'tally.approval', extensions: { 'dev.tally.approval': envelope } });
    await append(ran('p2', 'b'));
    // p3: the harness asked, and then ran it: approved in the harness (asserted by it).
    await append(push('p3', 'c'), ask);
    await append(ran('p3', 'c'));
    // p4: asked and never ran (headless refuses an ask): not approved, not a violation.
    await append(push('p4', 'd'), ask);
    // p5: no ask recorded; signed by a key that is not pinned: counts for nothing; it ran.
    const stranger = generateKeyPair().privateKey;
    await append(push('p5', 'e'));
    await append({
      type: 'tally.approval',
      extensions: {
        'dev.tally.approval': signApproval(
          { session, call: 'p5', decision: 'allow', time: base.time },
          stranger,
        ).envelope,
      },
    });
    await append(ran('p5', 'e'));
    // p6: signed by the pinned approver for another input than the one that ran: not approved.
    // p7: signed for exactly the input that ran (its digest, as `tally approve` signs): approved.
    for (const [id, seen] of [
      ['p6', 'git push origin elsewhere'],
      ['p7', 'git push origin g'],
    ] as const) {
      await append(push(id, 'g'));
      const signed = signApproval(
        {
          session,
          call: id,
          decision: 'allow',
          time: base.time,
          input: approvedInputDigest({ command: seen }),
        },
        approverKey,
      );
      await append({ type: 'tally.approval', extensions: { 'dev.tally.approval': signed.envelope } });
      await append(ran(id, 'g'));
    }
    await log.close();
    const checked: CheckedRecord[] = [];
    await verifyLogFile(path, { trusted: [fx.signer.privateKey], onRecord: (c) => checked.push(c) });
    const lines: Buffer[] = [];
    for await (const { line } of readLogLines(path)) lines.push(Buffer.from(line));
    const { bytes } = buildPackage(lines, checked, fx.signer);
    const result = await verifyPackage(bytes, {
      trusted: [fx.signer.key.publicKey],
      certificate,
      approvers: [approverPub],
      now: new Date('2026-06-01T00:00:00Z'),
    });
    const escalations = check(result, 'escalations');
    const calls = escalations.detail.calls as (Listed & { approval?: string; blocked: boolean })[];
    assert.deepEqual(
      calls.map((c) => [c.approved, c.approval ?? null, c.blocked]),
      [
        [false, null, false],
        [true, 'approver', false],
        [true, 'harness', false],
        [false, null, true],
        [false, null, false],
        [false, null, false],
        [true, 'approver', false],
      ],
    );
    assert.equal(escalations.ok, false);
    assert.equal(escalations.detail.unapproved, 3, 'p1, p5 and p6 ran without an approval that counts');
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
