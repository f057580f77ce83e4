/**
 * Forgeries by the key holder, caught by the session checks. Oracles, from the security
 * requirements: timestamps that run backwards fail (`timestamps_ordered`), a session without
 * `session.end` fails (`session_complete`, code `incomplete`), duplicate call ids fail
 * (`call_ids_unique`) — each exit 1 — and a `tool.before` without its `tool.after` is
 * `unfinished_call`, informational. Each forged package is re-signed with the ship key, so its
 * signatures, chain and Merkle root are valid and only the new check catches it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type VerifyResult, verifyPackage } from '../../src/evidence/package/verify.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { runTally } from '../cli/tally-process.js';
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
let fx: Fixture;
let genuine: Buffer;
let records: EventRecord[];

const NEW_CHECKS = ['timestamps_ordered', 'session_complete', 'call_ids_unique', 'unfinished_call'];

async function verify(bytes: Buffer): Promise<VerifyResult> {
  return verifyPackage(bytes, { trusted: [fx.signer.key.publicKey], now: NOW });
}

/** Every check that did not pass plainly (`ok`), as [check, code]. */
function notPlain(result: VerifyResult): string[][] {
  return result.checks.filter((c) => !c.ok || c.code !== 'ok').map((c) => [c.check, c.code]);
}

function forge(entries: ReturnType<typeof asInput>[]): Promise<Buffer> {
  return forgePackage(fx.dir, records[0]!.session, fx.signer, entries);
}

before(async () => {
  fx = await makeFixture('tally-forged-');
  const events = [
    toolBefore('c1', 'Bash', { command: 'ls' }, 'shell'),
    toolAfter('c1', 'Bash', { command: 'ls' }, 'shell'),
    toolBefore('c2', 'Read', { file_path: join(fx.root, 'README.md') }, 'read'),
    toolAfter('c2', 'Read', { file_path: join(fx.root, 'README.md') }, 'read'),
  ];
  const run = await runSession(fx, events, { clock: steppingClock('2026-03-01T09:00:00Z') });
  genuine = run.bytes;
  records = packageRecords(genuine);
  assert.deepEqual(
    records.map((r) => r.event.type),
    ['session.start', 'tool.before', 'tool.after', 'tool.before', 'tool.after', 'session.end'],
  );
});

after(() => removeTempDir(fx.dir));

describe('session checks against a key holder who re-signs the log', () => {
  it('a genuine session passes every new check plainly', async () => {
    const result = await verify(genuine);
    assert.equal(result.ok, true);
    for (const name of NEW_CHECKS) {
      const found = result.checks.find((c) => c.check === name);
      assert.equal(found?.code, 'ok', name);
    }
    // The forging itself changes nothing: the same records re-signed verify the same.
    const same = await verify(await forge(records.map(asInput)));
    assert.deepEqual(notPlain(same), []);
  });

  it('timestamps that run backwards fail timestamps_ordered', async () => {
    const entries = records.map(asInput);
    // The third record is dated an hour before the second.
    entries[2] = { ...entries[2]!, time: new Date(entries[1]!.time.getTime() - 3_600_000) };
    const result = await verify(await forge(entries));
    assert.equal(result.ok, false);
    assert.deepEqual(notPlain(result), [['timestamps_ordered', 'time-backwards']]);
    assert.equal(
      (result.checks.find((c) => c.check === 'timestamps_ordered')!.detail as { seq: number }).seq,
      2,
    );
  });

  it('a session without session.end fails session_complete as incomplete', async () => {
    const result = await verify(await forge(records.slice(0, -1).map(asInput)));
    assert.equal(result.ok, false);
    assert.deepEqual(notPlain(result), [['session_complete', 'incomplete']]);
  });

  it('a call id used by two tool.before records fails call_ids_unique', async () => {
    const entries = records.map(asInput);
    const second = asInput(records[3]!);
    const event = { ...second.input.event, id: 'evt-dup', call: { id: 'c1' } };
    entries[3] = { ...second, input: { ...second.input, event } };
    entries[4] = {
      ...entries[4]!,
      input: { ...entries[4]!.input, event: { ...entries[4]!.input.event, call: { id: 'c1' } } },
    };
    const result = await verify(await forge(entries));
    assert.equal(result.ok, false);
    assert.deepEqual(notPlain(result), [['call_ids_unique', 'duplicate-call-id']]);
    const detail = result.checks.find((c) => c.check === 'call_ids_unique')!.detail as Record<
      string,
      unknown
    >;
    assert.equal(detail.call, 'c1');
    assert.equal(detail.seq, 3);
    assert.equal(detail.first, 1);
  });

  it('a tool.before without its tool.after is unfinished_call, informational: the package still verifies', async () => {
    const entries = records.map(asInput).filter((_, i) => i !== 4);
    const result = await verify(await forge(entries));
    assert.equal(result.ok, true);
    assert.deepEqual(notPlain(result), [['unfinished_call', 'info']]);
    const detail = result.checks.find((c) => c.check === 'unfinished_call')!.detail as {
      count: number;
      calls: Array<{ seq: number; call: string }>;
    };
    assert.equal(detail.count, 1);
    assert.deepEqual(detail.calls, [{ seq: 3, call: 'c2' }]);
  });

  it('a clock stepped back while recording never dates a record before the one before it', async () => {
    const times = ['2026-03-02T10:00:00Z', '2026-03-02T10:00:05Z', '2026-03-02T09:00:00Z'];
    let i = 0;
    const clock = { now: () => new Date(times[Math.min(i++, times.length - 1)]!) };
    const run = await runSession(fx, [toolBefore('c1', 'Bash', { command: 'ls' }, 'shell')], { clock });
    const result = await verify(run.bytes);
    assert.equal(result.checks.find((c) => c.check === 'timestamps_ordered')?.code, 'ok');
    const dated = packageRecords(run.bytes).map((r) => Date.parse(r.time));
    for (let k = 1; k < dated.length; k++) assert.ok(dated[k]! >= dated[k - 1]!, `record ${k}`);
  });

  it('tally verify exits 1 on a forged package and names the check', async () => {
    const forged = join(fx.dir, 'incomplete.tally');
    writeFileSync(forged, await forge(records.slice(0, -1).map(asInput)));
    const env = { PATH: process.env.PATH, HOME: fx.dir, TALLY_HOME: join(fx.dir, 'home'), NO_COLOR: '1' };
    const trust = join(fx.state, 'keys', 'ship.pub.json');
    const ran = await runTally(['verify', forged, '--trust', trust, '--now', NOW.toISOString(), '--json'], {
      cwd: fx.dir,
      env,
    });
    assert.equal(ran.code, 1, ran.stderr);
    const out = JSON.parse(ran.stdout) as { checks: Array<{ check: string; ok: boolean; code: string }> };
    assert.deepEqual(
      out.checks.filter((c) => !c.ok).map((c) => [c.check, c.code]),
      [['session_complete', 'incomplete']],
    );
    const human = await runTally(['verify', forged, '--trust', trust, '--now', NOW.toISOString()], {
      cwd: fx.dir,
      env,
    });
    assert.equal(human.code, 1);
    assert.match(human.stdout + human.stderr, /session_complete/);
  });
});
