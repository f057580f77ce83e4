/**
 * docs/security.md ("Who acted, and on which model, only reports"): a path a payload names is opened
 * only as a regular file, with no final symbolic link — Codex's rollout `session_meta` among them.
 */
import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { rolloutProvider } from '../../src/capture/codex/rollout.js';
import { tempDir } from '../temp.js';

describe('Codex rollout read for the provider', () => {
  it('a rollout path that is a symbolic link is not read through', () => {
    const dir = tempDir('tally-rollout-link-');
    const elsewhere = join(dir, 'elsewhere.jsonl');
    writeFileSync(
      elsewhere,
      `${JSON.stringify({ type: 'session_meta', payload: { model_provider: 'forged' } })}\n`,
    );
    const link = join(dir, 'rollout-2026-12-01T00-00-00-abc.jsonl');
    symlinkSync(elsewhere, link);
    assert.equal(rolloutProvider(link), undefined, 'read through the final symbolic link');
  });
});
