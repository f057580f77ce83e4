/** `tally demo`, the README's main job, end to end through the real CLI. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tempDir } from '../temp.js';
import { jsonOut, runTally } from './tally-process.js';

describe('tally demo', () => {
  it('records, seals and verifies a session; the forbidden call is denied and a flipped byte is named', async () => {
    const dir = tempDir('tally-demo-test-');
    const ran = await runTally(['demo', '--json'], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, TMPDIR: dir },
    });
    assert.equal(ran.code, 0, ran.stderr);
    const out = jsonOut(ran) as {
      ok: boolean;
      cross_checks: { check: string; ok: boolean; code: string }[];
      tampered_check: { check: string; code: string };
    };
    assert.equal(out.ok, true);
    assert.ok(
      out.cross_checks.every((c) => c.ok),
      JSON.stringify(out.cross_checks.filter((c) => !c.ok)),
    );
    const unauthorized = out.cross_checks.find((c) => c.check === 'unauthorized_calls');
    assert.equal(unauthorized?.code, 'ok');
    assert.deepEqual(
      [out.tampered_check.check, out.tampered_check.code],
      ['record_signatures', 'bad-signature'],
    );
  });
});
