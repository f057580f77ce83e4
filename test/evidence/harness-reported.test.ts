/**
 * `harness_reported`: a session `tally run` wired for a harness (`dev.tally.wiring` in its signed
 * session.start) passes only when that harness's hooks reported it. Oracles, from what a run
 * promises: no event from the wired harness is `harness-silent`, a call that ran and that only the
 * agent's transcript shows is `calls-unreported`, and a session that records no wiring (every
 * package sealed before runs recorded one) verifies as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CheckResult, verifyPackage } from '../../src/evidence/package/verify.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import {
  type Fixture,
  makeFixture,
  runSession,
  steppingClock,
  toolAfter,
  toolBefore,
} from '../session/fixture.js';
import { removeTempDir } from '../temp.js';
import { asInput, forgePackage, packageRecords } from './forge.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const SOURCE = 'urn:tally:claude-code';
let fx: Fixture;
let genuine: Buffer;
let records: EventRecord[];

before(async () => {
  fx = await makeFixture('tally-harness-');
  const run = await runSession(
    fx,
    [
      toolBefore('c1', 'Bash', { command: 'ls' }, 'shell'),
      toolAfter('c1', 'Bash', { command: 'ls' }, 'shell'),
    ],
    { clock: steppingClock('2026-03-01T09:00:00Z') },
  );
  genuine = run.bytes;
  records = packageRecords(genuine);
});

after(() => removeTempDir(fx.dir));

async function harnessCheck(bytes: Buffer): Promise<CheckResult> {
  const result = await verifyPackage(bytes, { trusted: [fx.signer.key.publicKey], now: NOW });
  return result.checks.find((c) => c.check === 'harness_reported')!;
}

/** The session wired for Claude Code; `hooked` makes the tool events its hooks' reports. */
function wired(hooked: boolean, extra: EventRecord[] = []): Promise<Buffer> {
  const changed = [...records.slice(0, -2), ...extra, ...records.slice(-2)].map((r, i) => {
    if (i === 0)
      return {
        ...r,
        event: {
          ...r.event,
          extensions: {
            ...(r.event.extensions as object),
            'dev.tally.wiring': { harness: 'claude-code', event_source: SOURCE },
          },
        },
      };
    if (
      hooked &&
      (r.event.type === 'tool.before' || r.event.type === 'tool.after') &&
      r.source !== 'transcript'
    )
      return { ...r, source: 'hook', event: { ...r.event, source: SOURCE } };
    return r;
  });
  return forgePackage(fx.dir, records[0]!.session, fx.signer, changed.map(asInput));
}

describe('harness_reported', () => {
  it('passes as before for a session that records no wiring', async () => {
    const check = await harnessCheck(genuine);
    assert.deepEqual([check.ok, check.code], [true, 'ok']);
    assert.equal((check.detail as { harness: unknown }).harness, null);
  });

  it('passes when the wired harness reported the session', async () => {
    const check = await harnessCheck(await wired(true));
    assert.deepEqual([check.ok, check.code], [true, 'ok']);
    assert.deepEqual(check.detail, { harness: 'claude-code', events: 2 });
  });

  it('fails harness-silent when the wired harness sent nothing', async () => {
    const check = await harnessCheck(await wired(false));
    assert.deepEqual([check.ok, check.code], [false, 'harness-silent']);
  });

  it('fails calls-unreported when a call ran that only the transcript shows', async () => {
    const after = records.find((r) => r.event.type === 'tool.after')!;
    const seen: EventRecord = {
      ...after,
      source: 'transcript',
      event: {
        ...after.event,
        call: { id: 'toolu_only' },
        extensions: { 'dev.tally.transcript': { file: 't.jsonl', seen_only_in_transcript: true } },
      },
    };
    const check = await harnessCheck(await wired(true, [seen]));
    assert.deepEqual([check.ok, check.code], [false, 'calls-unreported']);
    // One the hooks stopped (the transcript shows it blocked) did not run: not counted.
    const blocked: EventRecord = {
      ...seen,
      event: { ...seen.event, outcome: 'denied', execution: { status: 'skipped', reason: 'policy' } },
    };
    const passed = await harnessCheck(await wired(true, [blocked]));
    assert.deepEqual([passed.ok, passed.code], [true, 'ok']);
  });
});
