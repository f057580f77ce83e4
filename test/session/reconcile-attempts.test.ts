/**
 * A close killed after its reconcile pass reported a change no channel saw, and before its summary;
 * the agent changes the tree; a later close runs the pass again. The dead attempt's report stays
 * in the log and is no witness: a file it reported created and the agent then removed has no row,
 * and a file still changed is reported by the pass that finished, not shown as corroborated by the
 * dead attempt. Real git; oracles: what the test wrote and removed, and the package verifier.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { startSession } from '../../src/session/lifecycle.js';
import { removeTempDir } from '../temp.js';
import {
  closePackage,
  type Fixture,
  killedClose,
  makeFixture,
  packageReceipt,
  packageRecords,
} from './fixture.js';

/** What a record says of its pass. */
function passOf(record: EventRecord): Record<string, unknown> {
  return (record.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
}

/** The digest the pass recorded for `path` after the change. */
function afterOf(record: EventRecord, path: string): unknown {
  return (record.event.extensions as Record<string, Record<string, Record<string, unknown>>>)[
    'dev.tally.changes'
  ]![path]!.after;
}

/**
 * A session in which `ghost.txt` is made by no channel, a close killed once the pass's report of
 * it is durable, `between` done to the tree, and a close that finishes: its package, its records,
 * the pass's reports (the dead one first) and its summary.
 */
async function twoCloses(fx: Fixture, between: (path: string) => void) {
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  const ghost = join(fx.root, 'ghost.txt');
  writeFileSync(ghost, 'made by no channel\n');
  await killedClose(fx, info.id);
  between(ghost);
  const pkg = await closePackage(fx, info.id);
  const records = packageRecords(fx, pkg);
  const reports = records.filter((r) => r.event.type === 'file.changed' && r.source === 'git-reconcile');
  const summary = records.find((r) => r.event.type === 'tally.reconcile.summary')!;
  return { pkg, reports, summary };
}

/** The package verifies, and workspace_reconciled lists `dead`, the one report no summary claims. */
async function assertDeadListed(fx: Fixture, pkg: Buffer, dead: EventRecord): Promise<void> {
  const verified = await verifyPackage(pkg, {
    trusted: [toPublicKey(fx.signer.privateKey)],
    now: new Date(),
  });
  assert.ok(verified.ok, JSON.stringify(verified.checks.filter((c) => !c.ok)));
  const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
  assert.deepEqual(
    [check.code, (check.detail as Record<string, unknown>).unclaimed_reports],
    ['info', { seqs: [dead.seq], count: 1 }],
  );
}

describe('a close killed after its pass reported a change, and one that runs the pass again', () => {
  it('a file the dead attempt reported created, removed before the next close, has no row; verification lists the dead report', async () => {
    const fx = await makeFixture('tally-attempts-removed-');
    try {
      const { pkg, reports, summary } = await twoCloses(fx, (ghost) => rmSync(ghost));
      // The dead attempt's report of ghost.txt, and none of the attempt that finished.
      assert.equal(reports.length, 1);
      const [dead] = reports;
      assert.deepEqual(
        (dead!.event.changes as Array<{ path: string }>).map((c) => c.path),
        ['ghost.txt'],
      );
      assert.notEqual(passOf(dead!).attempt, passOf(summary).attempt);
      assert.equal(passOf(summary).reported, 0);
      assert.deepEqual(packageReceipt(pkg).files_written, []);
      await assertDeadListed(fx, pkg, dead!);
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('a file still changed at the next close is that pass’s own report, not a path the dead attempt corroborates', async () => {
    const fx = await makeFixture('tally-attempts-changed-');
    try {
      const { pkg, reports, summary } = await twoCloses(fx, (ghost) =>
        writeFileSync(ghost, 'changed again\n'),
      );
      const [dead, live, ...more] = reports;
      assert.deepEqual(more, []);
      assert.ok(dead!.seq < live!.seq && live!.seq < summary.seq);
      assert.equal(passOf(live!).attempt, passOf(summary).attempt);
      assert.notEqual(passOf(dead!).attempt, passOf(summary).attempt);
      assert.deepEqual(passOf(summary).corroborated, []);
      assert.equal(passOf(summary).reported, 1);
      // One row, the finished pass its one witness, with the content it found.
      const rows = packageReceipt(pkg).files_written;
      assert.deepEqual(
        rows.map((r) => [r.path, r.operation, r.sources, r.seqs]),
        [['ghost.txt', 'created', ['git-reconcile'], [live!.seq]]],
      );
      assert.equal(rows[0]!.after, afterOf(live!, 'ghost.txt'));
      assert.notEqual(rows[0]!.after, afterOf(dead!, 'ghost.txt'));
      await assertDeadListed(fx, pkg, dead!);
    } finally {
      removeTempDir(fx.dir);
    }
  });
});
