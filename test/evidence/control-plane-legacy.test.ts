/**
 * A session whose start was recorded before the control plane was judged — Tally's own
 * `session.start` names the workspace root but no home — is re-judged offline as the live judge
 * judged it then: a write to `.claude/settings.json` it allowed is no escalation. A start that
 * names the homes is judged with the control plane. Oracle: docs/policy.md "The control plane".
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPair } from '../../src/core/keys.js';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { crossVerify } from '../../src/evidence/package/cross-verify.js';
import type { EventRecord } from '../../src/evidence/record/record.js';

const ROOT = '/work/project';
const certificate = issueCertificate(
  {
    name: 'coder',
    allow: ['Write'],
    validFrom: new Date('2026-01-01T00:00:00Z'),
    validUntil: new Date('2027-01-01T00:00:00Z'),
  },
  generateKeyPair().privateKey,
).certificate;

function record(
  seq: number,
  event: Record<string, unknown>,
  decision?: EventRecord['decision'],
): EventRecord {
  return {
    v: 2,
    seq,
    time: `2026-03-01T09:00:0${seq}.000Z`,
    session: 's',
    source: 'hook',
    event: {
      id: `e${seq}`,
      time: `2026-03-01T09:00:0${seq}.000Z`,
      session: { id: 'h', cwd: ROOT },
      ...event,
    },
    prev: null,
    ...(decision ? { decision } : {}),
  } as unknown as EventRecord;
}

/** A session that wrote Claude Code's project settings, allowed live, under a start with `workspace`. */
function session(workspace: Record<string, unknown>): EventRecord[] {
  const tool = { name: 'Write', input: { file_path: '.claude/settings.json', content: '{}' } };
  return [
    record(0, { type: 'session.start', extensions: { 'dev.tally.workspace': workspace } }),
    record(
      1,
      { type: 'tool.before', call: { id: 'c1' }, tool },
      { decision: 'allow', by: 'dev.tally.certificate' },
    ),
    record(2, { type: 'tool.after', call: { id: 'c1' }, tool, execution: { status: 'ok' } }),
  ];
}

describe('the control plane and sessions recorded before it', () => {
  it('a start naming no home: the allowed settings write stays allowed offline', () => {
    const result = crossVerify(certificate, session({ root: ROOT }));
    assert.deepEqual(result.escalations, []);
    assert.deepEqual(result.unauthorized, []);
  });

  it('a start naming the homes: the same write is an escalation that ran unapproved', () => {
    const result = crossVerify(
      certificate,
      session({ root: ROOT, home: '/home/dev', tally_home: '/home/dev/.tally' }),
    );
    assert.deepEqual(
      result.escalations.map((e) => e.verdict),
      ['escalate'],
    );
  });
});
