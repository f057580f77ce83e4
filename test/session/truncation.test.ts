/**
 * Truncation of a live log. Oracles, from the security requirements: deleting the last lines of a
 * live `events.log` needs no key, so the chain head (seq + digest) is kept outside the log — a
 * signed head file under the Tally home, not in the project tree, and in the recorder's memory —
 * and sealing a log shorter than its head fails with `truncated-log` naming the missing range; a
 * missing head file for an open session is `head-missing`, not a silent resume.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { headFilePath } from '../../src/evidence/log/head-file.js';
import { closeSession, openSession, recordEvent, startSession } from '../../src/session/lifecycle.js';
import { repairSession } from '../../src/session/repair.js';
import { logPath, packagePath, readSessionInfo } from '../../src/session/store.js';
import { removeTempDir } from '../temp.js';
import { type Fixture, makeFixture, toolAfter, toolBefore } from './fixture.js';

let fx: Fixture;

before(async () => {
  fx = await makeFixture('tally-trunc-');
});
after(() => removeTempDir(fx.dir));

/** A session with records 0 (start) … 4, each event recorded by its own open (one per process). */
async function liveSession(): Promise<string> {
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  const events = [
    toolBefore('c1', 'Bash', { command: 'ls' }, 'shell'),
    toolAfter('c1', 'Bash', { command: 'ls' }, 'shell'),
    toolBefore('c2', 'Bash', { command: 'git status' }, 'shell'),
    toolAfter('c2', 'Bash', { command: 'git status' }, 'shell'),
  ];
  for (const event of events)
    await recordEvent({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
      event,
      source: 'hook',
    });
  return info.id;
}

/** Removes the last `n` lines of a file, as anyone who can write it can. */
function cutLines(path: string, n: number): void {
  const bytes = readFileSync(path);
  let end = bytes.length - 1; // the final newline
  for (let i = 0; i < n; i++) end = bytes.lastIndexOf(0x0a, end - 1);
  truncateSync(path, end + 1);
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

const close = (id: string, extra: Record<string, unknown> = {}) =>
  closeSession({ state: fx.state, session: readSessionInfo(fx.state, id), signer: fx.signer, ...extra });

describe('the chain head outside the log', () => {
  it('is a file under the Tally home, not in the project tree, naming the last record', async () => {
    const id = await liveSession();
    const path = headFilePath(fx.state, id);
    assert.ok(existsSync(path), 'the head file is where the home keeps heads');
    assert.ok(!path.startsWith(fx.root), 'never in the project tree');
    // Two slots of signed heads (docs/formats.md, chain head): the later one names the last record.
    const heads = readFileSync(path, 'utf8')
      .split(/[\n\u0000]+/)
      .filter((line) => line.startsWith('{'))
      .map((line) => {
        const envelope = JSON.parse(line) as { payload: string; payloadType: string };
        assert.equal(envelope.payloadType, 'application/vnd.tally.head+json');
        return JSON.parse(Buffer.from(envelope.payload, 'base64').toString()) as {
          seq: number;
          session: string;
        };
      });
    assert.equal(heads.length, 2);
    const head = heads.reduce((a, b) => (b.seq > a.seq ? b : a));
    assert.equal(head.seq, 4);
    assert.equal(head.session, id);
    await close(id);
  });

  it('a live log whose last lines were deleted is refused at close as truncated-log, naming the range', async () => {
    const id = await liveSession();
    cutLines(logPath(fx.state, id), 2);
    await assert.rejects(close(id), (error: Error & { code?: string; detail?: { missing?: unknown } }) => {
      assert.equal(error.code, 'truncated-log');
      assert.deepEqual(error.detail?.missing, { from: 3, to: 4 });
      assert.match(error.message, /records 3–4/);
      return true;
    });
    assert.ok(!existsSync(packagePath(fx.state, id)), 'nothing was sealed');
    // An event is refused the same way: the chain is not continued from the cut.
    await assert.rejects(
      recordEvent({
        state: fx.state,
        session: readSessionInfo(fx.state, id),
        signer: fx.signer,
        event: toolBefore('c9', 'Bash', { command: 'ls' }, 'shell'),
        source: 'hook',
      }),
      (error: Error & { code?: string }) => error.code === 'truncated-log',
    );
  });

  it('a deleted head file is head-missing, for an event and for the close', async () => {
    const id = await liveSession();
    rmSync(headFilePath(fx.state, id));
    const event = toolBefore('c9', 'Bash', { command: 'ls' }, 'shell');
    await assert.rejects(
      recordEvent({
        state: fx.state,
        session: readSessionInfo(fx.state, id),
        signer: fx.signer,
        event,
        source: 'hook',
      }),
      (error: Error & { code?: string }) => error.code === 'head-missing',
    );
    await assert.rejects(close(id), (error: Error & { code?: string }) => error.code === 'head-missing');
    assert.ok(!existsSync(packagePath(fx.state, id)));
  });

  it('an older head file put back over a log cut back to it is caught by the head the recorder holds', async () => {
    const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
    const head = headFilePath(fx.state, info.id);
    const saved = `${head}.saved`;
    copyFileSync(head, saved); // the head at record 0
    const held = await openSession({
      state: fx.state,
      session: readSessionInfo(fx.state, info.id),
      signer: fx.signer,
    });
    await held.boundary.decide(toolBefore('c1', 'Bash', { command: 'ls' }, 'shell'), { source: 'hook' });
    await held.boundary.observe(toolAfter('c1', 'Bash', { command: 'ls' }, 'shell'), { source: 'hook' });
    const expectedHead = held.boundary.head;
    await held.close();
    assert.equal(expectedHead?.seq, 2);
    cutLines(logPath(fx.state, info.id), 2);
    copyFileSync(saved, head);
    await assert.rejects(
      close(info.id, { expectedHead }),
      (error: Error & { code?: string; detail?: { missing?: unknown } }) => {
        assert.equal(error.code, 'truncated-log');
        assert.deepEqual(error.detail?.missing, { from: 1, to: 2 });
        return true;
      },
    );
  });

  it('a head slot torn by a crash leaves the other slot; a head file with no valid slot is refused', async () => {
    const id = await liveSession();
    const path = headFilePath(fx.state, id);
    const bytes = readFileSync(path);
    // The latest head (record 4) is in slot 0: spoil it, as a write torn mid-slot would.
    const torn = Buffer.from(bytes);
    torn.fill(0x41, 10, 400);
    writeFileSync(path, torn);
    await record(id, toolBefore('c5', 'Bash', { command: 'ls' }, 'shell'));
    writeFileSync(path, Buffer.alloc(bytes.length, 0x41));
    await assert.rejects(
      record(id, toolBefore('c6', 'Bash', { command: 'ls' }, 'shell')),
      (error: Error & { code?: string }) => error.code === 'head-invalid',
    );
    // Repair re-establishes it from the log (and records that it did); recording goes on.
    const repaired = await repairSession({
      state: fx.state,
      session: readSessionInfo(fx.state, id),
      signer: fx.signer,
    });
    assert.equal(repaired.headMissing, true);
    await record(id, toolBefore('c7', 'Bash', { command: 'ls' }, 'shell'));
  });

  it('a whole session closes and seals as before', async () => {
    const id = await liveSession();
    const closed = await close(id);
    assert.equal(closed.records, 6);
    assert.ok(existsSync(closed.packagePath));
  });
});
