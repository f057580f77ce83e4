/**
 * Which verification checks make the hub refuse an upload. Oracles, from the security requirements
 * and docs/hub.md: informational checks (`unfinished_call`, `log_repaired`) never refuse; the
 * checks that expose a forged or cut package (`timestamps_ordered`, `session_complete`,
 * `call_ids_unique`) and a certificate the session did not run under (`certificate_bound`) do.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CheckResult } from '../../src/evidence/package/verify.js';
import { POLICY_CHECKS, refusingCheck } from '../../src/hub/ingest/package.js';

const pass = (check: string, code = 'ok') => ({ check, ok: true, code, detail: {} }) as CheckResult;
const fail = (check: string, code: string) => ({ check, ok: false, code, detail: {} }) as CheckResult;

describe('hub upload: the new checks, classified', () => {
  it('informational checks are listed as kept-not-refused and never refuse', () => {
    for (const check of ['unfinished_call', 'log_repaired']) {
      assert.ok(POLICY_CHECKS.has(check), check);
      assert.equal(refusingCheck([pass('merkle_root'), pass(check, 'info')]), undefined);
    }
  });

  for (const [check, code] of [
    ['timestamps_ordered', 'time-backwards'],
    ['session_complete', 'incomplete'],
    ['call_ids_unique', 'duplicate-call-id'],
    ['certificate_bound', 'other-certificate'],
  ] as const) {
    it(`${check} failing (${code}) refuses the upload`, () => {
      assert.ok(!POLICY_CHECKS.has(check));
      assert.equal(refusingCheck([pass('merkle_root'), fail(check, code)])?.check, check);
    });
  }
});
