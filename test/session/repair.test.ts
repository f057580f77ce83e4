/**
 * `tally session repair`. Oracles, from the security requirements: a foreign or corrupt line in the
 * live log must not brick the project; repair quarantines the bad bytes (as torn tails are) and
 * continues the chain from the last verified record with a `tally.log.repaired` record naming the
 * range and digest; nothing acknowledged is lost; the verifier reports it (`log_repaired`,
 * informational).
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sha256 } from '../../src/core/hash.js';
import { headFilePath } from '../../src/evidence/log/head-file.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { closeSession, recordEvent, startSession } from '../../src/session/lifecycle.js';
import { repairSession } from '../../src/session/repair.js';
import { logPath, readSessionInfo } from '../../src/session/store.js';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { packageRecords } from '../evidence/forge.js';
import { removeTempDir } from '../temp.js';
import { type Fixture, makeFixture, toolAfter, toolBefore } from './fixture.js';

let fx: Fixture;
const NOW = new Date('2099-01-01T00:00:00Z');
const FOREIGN = Buffer.from('{"note":"written by the agent"}\n');

before(async () => {
  fx = await makeFixture('tally-repair-');
});
after(() => removeTempDir(fx.dir));

async function liveSession(): Promise<string> {
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  for (const event of [
    toolBefore('c1', 'Bash', { command: 'ls' }, 'shell'),
    toolAfter('c1', 'Bash', { command: 'ls' }, 'shell'),
    toolBefore('c2', 'Bash', { command: 'git status' }, 'shell'),
    toolAfter('c2', 'Bash', { command: 'git status' }, 'shell'),
  ])
    await record(info.id, event);
  return info.id;
}

function record(id: string, event: unknown) {
  return recordEvent({
    state: fx.state,
    session: readSessionInfo(fx.state, id),
    signer: fx.signer,
    event,
    source: 'hook',
  });
}

function repair(id: string) {
  return repairSession({ state: fx.state, session: readSessionInfo(fx.state, id), signer: fx.signer });
}

/** Byte offset where line `n` (0-based) of a file starts. */
function lineStart(bytes: Buffer, n: number): number {
  let at = 0;
  for (let i = 0; i < n; i++) at = bytes.indexOf(0x0a, at) + 1;
  return at;
}

async function closeAndVerify(id: string) {
  const closed = await closeSession({
    state: fx.state,
    session: readSessionInfo(fx.state, id),
    signer: fx.signer,
  });
  const bytes = readFileSync(closed.packagePath);
  return { bytes, result: await verifyPackage(bytes, { trusted: [fx.signer.key.publicKey], now: NOW }) };
}

describe('session repair', () => {
  it('a foreign last line bricks the log until repair sets it aside and continues the chain', async () => {
    const id = await liveSession();
    const log = logPath(fx.state, id);
    const offset = statSync(log).size;
    appendFileSync(log, FOREIGN);
    await assert.rejects(record(id, toolBefore('c3', 'Read', { file_path: 'README.md' }, 'read')));
    const result = await repair(id);
    assert.equal(result.repaired, true);
    assert.deepEqual(result.ranges, [{ offset, bytes: FOREIGN.length }]);
    assert.equal(result.digest, `sha256:${sha256(FOREIGN).toString('hex')}`);
    assert.ok(readFileSync(result.quarantinePath!).equals(FOREIGN), 'the bad bytes are kept, set aside');
    assert.equal(result.lastSeq, 4);
    assert.equal(result.seq, 5);
    await record(id, toolBefore('c3', 'Read', { file_path: 'README.md' }, 'read'));
    const { bytes, result: verified } = await closeAndVerify(id);
    assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => !c.ok)));
    const repaired = verified.checks.find((c) => c.check === 'log_repaired')!;
    assert.equal(repaired.code, 'info');
    assert.equal((repaired.detail as { count: number }).count, 1);
    const types = packageRecords(bytes).map((r) => r.event.type);
    assert.deepEqual(types, [
      'session.start',
      'tool.before',
      'tool.after',
      'tool.before',
      'tool.after',
      'tally.log.repaired',
      'tool.before',
      'session.end',
    ]);
    const repairedRecord = packageRecords(bytes)[5]!;
    assert.equal(repairedRecord.source, 'recorder');
    assert.deepEqual(
      (repairedRecord.event.extensions as Record<string, { ranges: unknown; digest: string }>)[
        'dev.tally.repaired'
      ]!.ranges,
      [{ offset, bytes: FOREIGN.length }],
    );
  });

  it('a corrupt line in the middle loses no record: the ones after it still continue the chain', async () => {
    const id = await liveSession();
    const log = logPath(fx.state, id);
    const bytes = readFileSync(log);
    const at = lineStart(bytes, 3);
    writeFileSync(log, Buffer.concat([bytes.subarray(0, at), FOREIGN, bytes.subarray(at)]));
    const result = await repair(id);
    assert.deepEqual(result.ranges, [{ offset: at, bytes: FOREIGN.length }]);
    assert.equal(result.lastSeq, 4, 'every acknowledged record is kept');
    const { result: verified } = await closeAndVerify(id);
    assert.equal(verified.ok, true);
  });

  it('refuses, changing nothing, when setting bytes aside would drop an acknowledged record', async () => {
    const id = await liveSession();
    const log = logPath(fx.state, id);
    const bytes = readFileSync(log);
    // Record 2 overwritten: 3 and 4 no longer link, and the head says 4 was recorded.
    const from = lineStart(bytes, 2);
    const to = lineStart(bytes, 3);
    const damaged = Buffer.concat([bytes.subarray(0, from), FOREIGN, bytes.subarray(to)]);
    writeFileSync(log, damaged);
    await assert.rejects(repair(id), (error: Error & { code?: string; detail?: { missing?: unknown } }) => {
      assert.equal(error.code, 'truncated-log');
      assert.deepEqual(error.detail?.missing, { from: 2, to: 4 });
      return true;
    });
    assert.ok(readFileSync(log).equals(damaged), 'the log is as it was');
  });

  it('re-establishes a deleted head file from the log, and says so in the record', async () => {
    const id = await liveSession();
    rmSync(headFilePath(fx.state, id));
    const result = await repair(id);
    assert.equal(result.headMissing, true);
    assert.deepEqual(result.ranges, []);
    const { bytes, result: verified } = await closeAndVerify(id);
    assert.equal(verified.ok, true);
    const repairedRecord = packageRecords(bytes).find((r) => r.event.type === 'tally.log.repaired')!;
    assert.equal(
      (repairedRecord.event.extensions as Record<string, { head_missing: boolean }>)['dev.tally.repaired']!
        .head_missing,
      true,
    );
  });

  it('a whole log is left alone', async () => {
    const id = await liveSession();
    const before = readFileSync(logPath(fx.state, id));
    const result = await repair(id);
    assert.equal(result.repaired, false);
    assert.ok(readFileSync(logPath(fx.state, id)).equals(before));
  });

  it('tally session repair, then close and verify, as real processes', async () => {
    const p = makeProject('tally-repair-cli-');
    try {
      assert.equal((await p.tally(['init'])).code, 0);
      assert.equal((await p.tally(['session', 'start'])).code, 0);
      const event = JSON.stringify(toolBefore('c1', 'Bash', { command: 'ls' }, 'shell'));
      assert.equal((await p.tally(['session', 'event', '--source', 'hook'], { stdin: event })).code, 0);
      const status = jsonOut(await p.tally(['session', 'status', '--json']));
      const id = status.session as string;
      appendFileSync(join(p.root, '.tally', 'sessions', id, 'events.log'), FOREIGN);
      const stuck = await p.tally(['session', 'event', '--source', 'hook'], { stdin: event });
      assert.notEqual(stuck.code, 0);
      const repaired = await p.tally(['session', 'repair', '--json']);
      assert.equal(repaired.code, 0, repaired.stderr);
      assert.equal(jsonOut(repaired).repaired, true);
      const closed = await p.tally(['session', 'close', '--json']);
      assert.equal(closed.code, 0, closed.stderr);
      const verified = await p.tally(['verify', jsonOut(closed).package as string, '--json']);
      assert.equal(verified.code, 0, verified.stdout);
      const checks = jsonOut(verified).checks as Array<{ check: string; code: string }>;
      assert.equal(checks.find((c) => c.check === 'log_repaired')?.code, 'info');
    } finally {
      removeTempDir(p.dir);
    }
  });
});
