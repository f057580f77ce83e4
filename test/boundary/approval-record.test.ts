/**
 * A signed approval is recorded as signed — redacting its signature would destroy the evidence — but
 * only when redaction would leave it unchanged: a secret inside it is still redacted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prepareEvent } from '../../src/boundary/prepare.js';
import { generateKeyPair } from '../../src/core/keys.js';
import { signApproval, verifyApproval } from '../../src/evidence/approval.js';

const KEY = generateKeyPair();
const TOKEN = `ghp_${'a1B2c3D4e5'.repeat(4)}`;

function approvalEvent(reason?: string) {
  const { envelope } = signApproval(
    {
      session: 's1',
      call: 'c1',
      decision: 'allow',
      time: '2026-12-01T00:00:00.000Z',
      ...(reason ? { reason } : {}),
    },
    KEY.privateKey,
  );
  return { envelope, event: { type: 'tally.approval', extensions: { 'dev.tally.approval': envelope } } };
}

describe('approvals at the boundary', () => {
  it('records a clean approval byte for byte, still verifiable', () => {
    const { envelope, event } = approvalEvent('release day');
    const { event: prepared } = prepareEvent(event, 's1', new Date());
    const kept = (prepared.extensions as Record<string, unknown>)['dev.tally.approval'];
    assert.deepEqual(kept, envelope);
    assert.equal(verifyApproval(kept, [KEY.publicKey]).call, 'c1');
  });

  it('redacts an approval that carries a secret (and it then verifies no more)', () => {
    const { event } = approvalEvent(`token ${TOKEN}`);
    const { event: prepared } = prepareEvent(event, 's1', new Date());
    const kept = (prepared.extensions as Record<string, unknown>)['dev.tally.approval'] as {
      payload: string;
    };
    const decoded = Buffer.from(kept.payload, 'base64').toString('latin1');
    assert.ok(!`${JSON.stringify(prepared)}${decoded}`.includes(TOKEN.slice(4)), 'the secret is gone');
    assert.throws(() => verifyApproval(kept, [KEY.publicKey]));
  });
});
