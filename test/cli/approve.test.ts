/**
 * A person's approval of an escalated call: signed with an encrypted approver key at a terminal,
 * recorded in the session, and counted by verification only when a pinned approver key signed it
 * and only for the input the person saw. An approval the agent's own hook channel sends — even one
 * shaped like a signed approval — counts for nothing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateKeyPair } from '../../src/core/keys.js';
import { signApproval } from '../../src/evidence/approval.js';
import { tallyOnPty } from './pty.js';
import { jsonOut, makeProject, toolEvent } from './tally-process.js';

const APPROVER_SECRET = 'approver passphrase 42';

async function escalatedSession() {
  const p = makeProject('tally-approve-');
  assert.equal((await p.tally(['init'])).code, 0);
  const reg = await p.tally([
    'agent',
    'register',
    '--name',
    'coder',
    '--allow',
    'Read',
    '--allow',
    'Bash',
    '--escalate',
    'Bash(git push*)',
  ]);
  assert.equal(reg.code, 0, reg.stderr);
  assert.equal((await p.tally(['session', 'start', '--agent', 'coder'])).code, 0);
  const asked = await p.tally(['session', 'event', '--source', 'hook', '--json'], {
    stdin: toolEvent('push-1', 'Bash', { command: 'git push origin main' }, 'shell'),
  });
  assert.equal(asked.code, 0, asked.stderr);
  assert.equal((jsonOut(asked).decision as { decision: string }).decision, 'ask');
  return p;
}

async function initApprover(p: Awaited<ReturnType<typeof escalatedSession>>) {
  const init = await tallyOnPty(
    ['approver', 'init', '--json'],
    [
      ['new passphrase for the approver key: ', APPROVER_SECRET],
      ['the same passphrase again: ', APPROVER_SECRET],
    ],
    { cwd: p.root, env: p.env },
  );
  assert.equal(init.code, 0, init.screen + init.stderr);
  const keyFile = readFileSync(join(p.home, 'keys', 'approver.key.json'), 'utf8');
  assert.match(keyFile, /"kdf":"scrypt"/, 'the approver key is encrypted at rest');
  assert.ok(!keyFile.includes(APPROVER_SECRET));
}

/** The harness ran the call (its report, after the ask). */
async function ran(p: Awaited<ReturnType<typeof escalatedSession>>) {
  const after = await p.tally(['session', 'event', '--source', 'hook'], {
    stdin: JSON.stringify({
      type: 'tool.after',
      call: { id: 'push-1' },
      path: 'native',
      tool: { origin: 'native', name: 'Bash', kind: 'shell', input: { command: 'git push origin main' } },
      outcome: 'ok',
      execution: { status: 'executed' },
      items: [],
    }),
  });
  assert.equal(after.code, 0, after.stderr);
}

type Escalation = { approved: boolean; approval?: string; approved_by?: string };

async function closeAndVerify(p: Awaited<ReturnType<typeof escalatedSession>>, extra: string[] = []) {
  const close = await p.tally(['session', 'close', '--json']);
  assert.equal(close.code, 0, close.stderr);
  const pkg = jsonOut(close).package as string;
  const verified = await p.tally(['verify', pkg, '--certificate', 'coder', '--json', ...extra]);
  const escalations = (
    jsonOut(verified).checks as { check: string; ok: boolean; detail: { calls: Escalation[] } }[]
  ).find((c) => c.check === 'escalations');
  return { code: verified.code, escalations, calls: escalations?.detail.calls ?? [], out: verified.stdout };
}

describe('tally approve', () => {
  it('approves at a terminal; verify then counts the escalation as approved by the pinned approver', async () => {
    const p = await escalatedSession();
    await initApprover(p);
    const list = await p.tally(['approve', '--json']);
    assert.equal(list.code, 0, list.stderr);
    const waiting = jsonOut(list).calls as { call: string; tool: string; decided: string | null }[];
    assert.deepEqual(
      waiting.map((c) => [c.call, c.tool, c.decided]),
      [['push-1', 'Bash', null]],
    );
    const approved = await tallyOnPty(
      ['approve', 'push-1', '--reason', 'release day'],
      [
        ['approve this call? [y/N] ', 'y'],
        ['passphrase for the approver key: ', APPROVER_SECRET],
      ],
      { cwd: p.root, env: p.env },
    );
    assert.equal(approved.code, 0, approved.screen + approved.stderr);
    assert.match(approved.screen, /git push origin main/, 'the person is shown the call as recorded');
    const after = jsonOut(await p.tally(['approve', '--json'])).calls as { decided: string | null }[];
    assert.equal(after[0]?.decided, 'allow');
    await ran(p);
    const approver = (
      jsonOut(await p.tally(['approver', 'list', '--json'])).approvers as { key_id: string }[]
    )[0]!;
    const { code, calls, out } = await closeAndVerify(p);
    assert.equal(code, 0, out);
    assert.deepEqual(calls, [
      { ...calls[0], approved: true, approval: 'approver', approved_by: approver.key_id },
    ]);
  });

  it('refuses without a terminal, with a wrong passphrase or unconfirmed, and records nothing', async () => {
    const p = await escalatedSession();
    await initApprover(p);
    const logFile = () => {
      const id = readFileSync(join(p.root, '.tally/sessions/current'), 'utf8').trim();
      return readFileSync(join(p.root, '.tally/sessions', id, 'events.log'));
    };
    const before = logFile();
    const piped = await p.tally(['approve', 'push-1'], { stdin: `y\n${APPROVER_SECRET}\n` });
    assert.equal(piped.code, 2);
    assert.match(piped.stderr, /needs a person at a terminal/);
    const declined = await tallyOnPty(['approve', 'push-1'], [['approve this call? [y/N] ', 'n']], {
      cwd: p.root,
      env: p.env,
    });
    assert.equal(declined.code, 1);
    assert.match(declined.screen, /nothing recorded/);
    const wrong = await tallyOnPty(
      ['approve', 'push-1'],
      [
        ['approve this call? [y/N] ', 'y'],
        ['passphrase for the approver key: ', 'not it'],
      ],
      { cwd: p.root, env: p.env },
    );
    assert.equal(wrong.code, 2, wrong.screen);
    assert.match(wrong.screen, /passphrase/);
    const unknown = await p.tally(['approve', 'nope']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no escalated call 'nope'.*push-1/);
    assert.deepEqual(logFile(), before, 'nothing was recorded');
    await ran(p);
    const { calls } = await closeAndVerify(p);
    assert.equal(calls[0]?.approval, 'harness', 'only the harness asserts it was approved');
  });

  it('an approval sent through the hook channel, signed by a key nobody pinned, approves nothing', async () => {
    const p = await escalatedSession();
    const forged = signApproval(
      { session: 'any', call: 'push-1', decision: 'allow', time: new Date().toISOString() },
      generateKeyPair().privateKey,
    );
    const id = readFileSync(join(p.root, '.tally/sessions/current'), 'utf8').trim();
    const sent = await p.tally(['session', 'event', '--source', 'hook'], {
      stdin: JSON.stringify({
        type: 'tally.approval',
        extensions: { 'dev.tally.approval': { ...forged.envelope } },
        session: { id },
      }),
    });
    assert.equal(sent.code, 0, sent.stderr);
    await ran(p);
    const { calls } = await closeAndVerify(p);
    assert.equal(calls[0]?.approval, 'harness', 'the forged approval counts for nothing');
  });
});

describe('what tally approve shows a person', () => {
  it('escapes terminal controls and direction overrides the agent put in a command', async () => {
    const { shown } = await import('../../src/cli/commands/approve.js');
    // Oracle: the escapes spelled out by hand; what remains is plain printable text.
    assert.equal(shown('rm -rf /\u001b[2K\rls'), 'rm -rf /\\u001b[2K\\u000dls');
    assert.equal(shown('echo \u202egnp.exe'), 'echo \\u202egnp.exe');
    assert.equal(shown('git push origin main'), 'git push origin main');
  });
});
