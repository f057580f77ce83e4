/**
 * The boundary answers a write to the agent's control plane with an escalation and records why,
 * and the verifier, reading only the record, reaches the same verdict. Oracle: docs/policy.md
 * "The control plane" (a write there is `ask` under a certificate that says nothing of it).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueCertificate } from '../../src/evidence/certificate.js';
import { crossVerify } from '../../src/evidence/package/cross-verify.js';
import { certificateFor, openFixture, signer, toolBefore } from './fixture.js';

/** A Write of Claude Code's project settings, from the project root. */
const settingsWrite = (root: string) =>
  toolBefore('Write', { file_path: '.claude/settings.json', content: '{}' }, root);

describe('the control plane at the boundary', () => {
  it('a Write to .claude/settings.json and a redirection into .codex/config.toml are asked, with the reason', async () => {
    const certificate = certificateFor({ allow: ['Write', 'Bash'] });
    const f = await openFixture(certificate, null);
    try {
      const write = await f.boundary.decide(settingsWrite(f.root), { source: 'hook' });
      assert.equal(write.decision, 'ask');
      assert.match(String(write.reason), /control plane \(\.claude\/settings\.json\)/);
      const bash = await f.boundary.decide(
        toolBefore('Bash', { command: 'echo x > .codex/config.toml' }, f.root),
        {
          source: 'hook',
        },
      );
      assert.equal(bash.decision, 'ask');
      assert.match(String(bash.reason), /control plane \(\.codex\/config\.toml\)/);
      const plain = await f.boundary.decide(toolBefore('Bash', { command: 'echo x > notes.txt' }, f.root), {
        source: 'hook',
      });
      assert.equal(plain.decision, 'allow');

      const records = await f.records();
      const decided = records.map((r) => r.decision);
      assert.deepEqual(
        decided.map((d) => d?.decision),
        ['ask', 'ask', 'allow'],
      );
      assert.match(String(decided[0]?.reason), /control_plane is ask/);
      // Offline, from the record alone: the same two calls need escalation, the third does not.
      const offline = crossVerify(certificate, records);
      assert.deepEqual(
        offline.escalations.map((e) => [e.input, e.verdict]),
        [
          [{ file_path: '.claude/settings.json', content: '{}' }, 'escalate'],
          [{ command: 'echo x > .codex/config.toml' }, 'escalate'],
        ],
      );
      assert.equal(offline.unauthorized.length, 0);
    } finally {
      await f.close();
    }
  });

  it('a certificate with control_plane allow lets the same calls through, live and offline', async () => {
    const certificate = issueCertificate(
      {
        name: 'coder',
        allow: ['Write', 'Bash'],
        controlPlane: 'allow',
        validFrom: new Date(Date.now() - 3_600_000),
        validUntil: new Date(Date.now() + 3_600_000),
      },
      signer.privateKey,
    ).certificate;
    const f = await openFixture(certificate, null);
    try {
      const write = await f.boundary.decide(settingsWrite(f.root), { source: 'hook' });
      assert.equal(write.decision, 'allow');
      const offline = crossVerify(certificate, await f.records());
      assert.equal(offline.escalations.length + offline.unauthorized.length, 0);
    } finally {
      await f.close();
    }
  });
});
