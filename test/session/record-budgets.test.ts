/**
 * What a start and a close record of the tree stays within a log line, whatever names the agent
 * gives its files: a path may be 4,095 bytes, and a few thousand such files made the start's
 * baseline, or the close's summary, a line the log refuses — so the start failed, or the close
 * failed at every try and the session was never sealed. Real git, long names made on disk; oracles:
 * the log's line limit, what the test wrote, and the package verifier.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BoundaryError } from '../../src/boundary/prepare.js';
import { RECENT_MS } from '../../src/capture/reconcile/stat.js';
import { inspectPackage, summary } from '../../src/cli/package-view.js';
import { BASELINE_MAP_BYTES, jsonBytes, jsonBytesWithin } from '../../src/core/json-budget.js';
import { toPublicKey } from '../../src/core/keys.js';
import { verifyPackage } from '../../src/evidence/package/verify.js';
import { fitReceipt } from '../../src/evidence/receipt/fit.js';
import { omittedField, shareRows } from '../../src/evidence/receipt/row-share.js';
import { MAX_LINE_BYTES } from '../../src/evidence/record/codec.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { closeSession, recordEvent, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo } from '../../src/session/store.js';
import { removeTempDir } from '../temp.js';
import {
  closePackage,
  type Fixture,
  git,
  killedClose,
  makeFixture,
  packageLines,
  packageReceipt,
  packageRecords,
  runSession,
  toolBefore,
  variedEvents,
} from './fixture.js';

/** Long paths in byte order, 3.6 KB each: `count` names under a folder fourteen names deep. */
function longPaths(count: number): string[] {
  const folder = Array.from({ length: 14 }, () => 'd'.repeat(240)).join('/');
  return Array.from(
    { length: count },
    (_, i) => `${folder}/f${String(i).padStart(6, '0')}${'x'.repeat(200)}`,
  );
}

/** `count` long paths (`longPaths`) made as files under `root`, one line each: the paths. */
function longNamedFiles(root: string, count: number): string[] {
  const paths = longPaths(count);
  mkdirSync(join(root, dirname(paths[0]!)), { recursive: true });
  for (const [i, path] of paths.entries()) writeFileSync(join(root, path), `${i}\n`);
  return paths;
}

/** One hook event reporting `paths` created, as a channel would. */
async function reportCreated(fx: Fixture, id: string, paths: readonly string[]): Promise<void> {
  await recordEvent({
    state: fx.state,
    session: readSessionInfo(fx.state, id),
    signer: fx.signer,
    source: 'hook',
    event: {
      type: 'file.changed',
      changes: paths.map((path) => ({ path: join(fx.root, path), operation: 'create', agentCaused: true })),
    },
  });
}

/**
 * A session in which 4,600 files with long paths are made and one channel's event names them all
 * (17 MB): the pass corroborates every one, more than the summary's share holds.
 */
async function corroboratedSession(fx: Fixture): Promise<{ id: string; paths: string[] }> {
  const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
  const paths = longNamedFiles(fx.root, 4600);
  await reportCreated(fx, info.id, paths);
  return { id: info.id, paths };
}

async function checks(
  fx: Fixture,
  pkg: Buffer,
): Promise<Map<string, { ok: boolean; code: string; detail: unknown }>> {
  const verified = await verifyPackage(pkg, {
    trusted: [toPublicKey(fx.signer.privateKey)],
    now: new Date(),
  });
  assert.ok(verified.ok, JSON.stringify(verified.checks.filter((c) => !c.ok)));
  return new Map(verified.checks.map((c) => [c.check, c]));
}

function reconcileOf(record: EventRecord): Record<string, unknown> {
  return (record.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.reconcile']!;
}

describe('records of a tree of long names', () => {
  it('a start among 14,000 untracked files with 3.6 KB paths records the first within its share, and the close still sees a change to one past it', async () => {
    const fx = await makeFixture('tally-budget-start-');
    try {
      const paths = longNamedFiles(fx.root, 14_000);
      await sleep(RECENT_MS + 200); // the start's stats vouch for the files (one written just now is always compared)
      const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
      // One recorded at the start, and the last one, past the share: both changed in the session.
      writeFileSync(join(fx.root, paths[0]!), 'changed\n');
      writeFileSync(join(fx.root, paths.at(-1)!), 'changed\n');
      const pkg = await closePackage(fx, info.id);
      const lines = packageLines(pkg);
      assert.ok(Math.max(...lines.map((l) => l.length)) <= MAX_LINE_BYTES);
      const records = packageRecords(fx, pkg);
      const start = records.find((r) => r.event.type === 'session.start')!;
      const baseline = (start.event.extensions as Record<string, Record<string, Record<string, unknown>>>)[
        'dev.tally.workspace'
      ]!.baseline!;
      const recorded = Object.keys(baseline.dirty as object).length;
      assert.ok(recorded > 1000 && recorded < 14_000, `${recorded} dirty paths recorded`);
      assert.equal(baseline.skipped, 14_000 - recorded);
      assert.equal(baseline.map_bytes, BASELINE_MAP_BYTES);
      assert.ok(!(paths.at(-1)! in (baseline.dirty as object)));
      // The close's end state is cut the same way, and its summary is a line the log holds.
      const summary = reconcileOf(records.find((r) => r.event.type === 'tally.reconcile.summary')!);
      assert.equal((summary.end as Record<string, unknown>).map_bytes, BASELINE_MAP_BYTES);
      // Named by their place among the files made (a path is 3.6 KB).
      const rows = packageReceipt(pkg).files_written.map((row) => [paths.indexOf(row.path), row.operation]);
      assert.deepEqual(rows, [
        [0, 'modified'],
        [13_999, 'modified'],
      ]);
      assert.equal((await checks(fx, pkg)).get('workspace_reconciled')?.ok, true);
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('git’s own files that fill the share: a hook deleted past it fails workspace_reconciled, and user work thrown away past it is still reported', async () => {
    const fx = await makeFixture('tally-budget-gitcut-');
    try {
      const r = fx.root;
      writeFileSync(join(r, 'zz-tracked.txt'), 'committed\n');
      git(r, 'add', '.');
      git(r, 'commit', '-qm', 'zz');
      writeFileSync(join(r, 'zz-tracked.txt'), 'the user’s work, not committed\n');
      writeFileSync(join(r, '.git/hooks/pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      // 750 files under .git/hooks whose folders are named with control characters: written \u0001
      // in JSON, 22 KB a path, 17 MB together — past the baseline's share before any dirty file.
      const deep = join(r, '.git/hooks/a', ...Array.from({ length: 15 }, () => '\x01'.repeat(250)));
      mkdirSync(deep, { recursive: true });
      for (let i = 0; i < 750; i++) writeFileSync(join(deep, `f${String(i).padStart(4, '0')}`), '');
      await sleep(RECENT_MS + 200);
      const { info } = await startSession({ state: fx.state, root: r, signer: fx.signer });
      git(r, 'checkout', '--', 'zz-tracked.txt');
      rmSync(join(r, '.git/hooks/pre-commit'));
      const pkg = await closePackage(fx, info.id);
      const records = packageRecords(fx, pkg);
      const start = records.find((rec) => rec.event.type === 'session.start')!;
      const baseline = (start.event.extensions as Record<string, Record<string, Record<string, unknown>>>)[
        'dev.tally.workspace'
      ]!.baseline!;
      assert.ok((baseline.git_state_cut as number) > 0);
      assert.equal(baseline.cut_from, 'zz-tracked.txt');
      const rows = packageReceipt(pkg).files_written.map((row) => [row.path, row.operation]);
      assert.ok(
        rows.some(([path, operation]) => path === 'zz-tracked.txt' && operation === 'modified'),
        JSON.stringify(rows.filter(([path]) => !String(path).startsWith('.git/'))),
      );
      const verified = await verifyPackage(pkg, {
        trusted: [toPublicKey(fx.signer.privateKey)],
        now: new Date(),
      });
      const check = verified.checks.find((c) => c.check === 'workspace_reconciled')!;
      assert.deepEqual([check.ok, check.code], [false, 'baseline-cut']);
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('corroborated paths past the summary’s share go in records of their own, and every row keeps the pass as a witness', async () => {
    const fx = await makeFixture('tally-budget-corroborated-');
    try {
      const { id, paths } = await corroboratedSession(fx);
      const pkg = await closePackage(fx, id);
      const records = packageRecords(fx, pkg);
      const parts = records.filter((r) => r.event.type === 'tally.reconcile.corroborated');
      const summary = reconcileOf(records.find((r) => r.event.type === 'tally.reconcile.summary')!);
      assert.equal(parts.length, 1);
      assert.equal(parts[0]!.source, 'git-reconcile');
      assert.equal(summary.corroborated_parts, 2);
      assert.equal(summary.reported, 0);
      const listed = [summary, reconcileOf(parts[0]!)].flatMap(
        (s) => s.corroborated as Array<{ path: string }>,
      );
      assert.ok(listed.length === paths.length && listed.every((c, i) => c.path === paths[i]));
      const rows = packageReceipt(pkg).files_written;
      assert.equal(rows.length, paths.length);
      const unlike = rows.filter(
        (row) => row.operation !== 'created' || row.sources.join() !== 'git-reconcile,hook',
      );
      assert.equal(unlike.length, 0, `${unlike.length} rows are not created with both witnesses`);
      await checks(fx, pkg);
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('a close that died between its corroborated parts and its summary: the next close reads only its own parts, and a file removed in between has no git-reconcile witness', async () => {
    const fx = await makeFixture('tally-budget-attempts-');
    try {
      const { id, paths } = await corroboratedSession(fx);
      // The first close dies once its first record, a part, is durable, before its summary.
      await killedClose(fx, id);
      // The last file, listed in that part, is gone when the close runs again.
      const gone = paths.at(-1)!;
      rmSync(join(fx.root, gone));
      const pkg = await closePackage(fx, id);
      const records = packageRecords(fx, pkg);
      const [stale, part, ...more] = records.filter((r) => r.event.type === 'tally.reconcile.corroborated');
      const summaryRecord = records.find((r) => r.event.type === 'tally.reconcile.summary')!;
      assert.deepEqual(more, []);
      assert.ok(stale!.seq < part!.seq && part!.seq < summaryRecord.seq);
      const listed = (record: EventRecord) =>
        (reconcileOf(record).corroborated as Array<{ path: string }>).map((c) => c.path);
      assert.ok(listed(stale!).includes(gone));
      assert.ok(![summaryRecord, part!].some((r) => listed(r).includes(gone)));
      const rows = packageReceipt(pkg).files_written;
      assert.equal(rows.length, paths.length);
      // The stale part is no row's witness: the removed file is the hook's alone, and every other
      // row has the pass's second attempt as its one git-reconcile witness.
      const row = rows.find((r) => r.path === gone)!;
      assert.deepEqual([row.operation, row.sources], ['created', ['hook']]);
      const stalely = rows.filter((r) => r.seqs.includes(stale!.seq)).length;
      assert.equal(stalely, 0, `${stalely} rows take the stale part as a witness`);
      const unlike = rows.filter(
        (r) => r.path !== gone && (r.seqs.length !== 2 || r.sources.join() !== 'git-reconcile,hook'),
      ).length;
      assert.equal(unlike, 0, `${unlike} rows are not created with one witness of each`);
      // The summary names the attempt its part names, not the one that died.
      const summary = reconcileOf(summaryRecord);
      assert.equal(summary.attempt, reconcileOf(part!).attempt);
      assert.notEqual(summary.attempt, reconcileOf(stale!).attempt);
      const check = (await checks(fx, pkg)).get('workspace_reconciled')!;
      assert.deepEqual(
        [check.code, (check.detail as Record<string, unknown>).unclaimed_parts],
        ['info', { seqs: [stale!.seq], count: 1 }],
      );
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('a channel reporting 14,000 files with 3.6 KB paths: the close seals, the receipt counts what its size bound left out, and receipt_complete fails', async () => {
    const fx = await makeFixture('tally-budget-receipt-');
    try {
      const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
      // Names only (the files are not made): two events of 7,000 each, 26 MB apiece; their rows
      // together made a receipt the seal line could not hold, and the close failed at every try.
      const paths = longPaths(14_000);
      for (const half of [paths.slice(0, 7000), paths.slice(7000)]) await reportCreated(fx, info.id, half);
      const closed = await closeSession({
        state: fx.state,
        session: readSessionInfo(fx.state, info.id),
        signer: fx.signer,
      });
      const pkg = readFileSync(closed.packagePath);
      const receipt = packageReceipt(pkg);
      const kept = receipt.files_written.length;
      assert.ok(kept > 1000 && kept < paths.length, `${kept} rows kept`);
      assert.deepEqual(receipt.files_written_omitted, { count: paths.length - kept });
      assert.equal(receipt.counts.files_written, paths.length);
      // The rows kept are the first in the receipt's order.
      assert.ok(
        receipt.files_written.every((row, i) => row.path === paths[i] && row.sources.join() === 'hook'),
      );
      const verified = await verifyPackage(pkg, {
        trusted: [toPublicKey(fx.signer.privateKey)],
        now: new Date(),
      });
      const failed = verified.checks.filter((c) => !c.ok).map((c) => [c.check, c.code]);
      assert.deepEqual(failed, [['receipt_complete', 'rows-omitted']]);
      assert.match(
        summary(await inspectPackage(closed.packagePath)),
        new RegExp(
          `files written \\(${paths.length}\\)[\\s\\S]*… ${paths.length - kept} more past the receipt's size bound`,
        ),
      );
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('a path past the receipt’s share that a channel reported is corroborated by the pass, not reported as unseen', async () => {
    const fx = await makeFixture('tally-budget-seen-');
    try {
      const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
      // 7,000 names (25 MB of rows, not made) fill the share; the file made last in byte order is past it.
      writeFileSync(join(fx.root, 'zz.txt'), 'made by the agent\n');
      await reportCreated(fx, info.id, [...longPaths(7000), 'zz.txt']);
      const pkg = await closePackage(fx, info.id);
      assert.ok((packageReceipt(pkg).files_written_omitted?.count ?? 0) > 0);
      const records = packageRecords(fx, pkg);
      const summary = reconcileOf(records.find((r) => r.event.type === 'tally.reconcile.summary')!);
      assert.equal(summary.reported, 0);
      assert.deepEqual(
        (summary.corroborated as Array<{ path: string; operation: string }>).map((c) => [
          c.path,
          c.operation,
        ]),
        [['zz.txt', 'created']],
      );
      assert.equal(
        records.filter((r) => r.source === 'git-reconcile' && r.event.type === 'file.changed').length,
        0,
      );
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('a channel’s event of the corroborated records’ type is refused, and nothing is recorded', async () => {
    const fx = await makeFixture('tally-budget-forged-');
    try {
      const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
      const session = readSessionInfo(fx.state, info.id);
      await assert.rejects(
        recordEvent({
          state: fx.state,
          session,
          signer: fx.signer,
          source: 'hook',
          event: {
            type: 'tally.reconcile.corroborated',
            extensions: {
              'dev.tally.reconcile': { corroborated: [{ path: 'src/app.js', operation: 'modified' }] },
            },
          },
        }),
        (error: unknown) => error instanceof BoundaryError && /written only by the close/.test(error.message),
      );
      const pkg = await closePackage(fx, info.id);
      assert.equal(
        packageRecords(fx, pkg).filter((r) => r.event.type === 'tally.reconcile.corroborated').length,
        0,
      );
    } finally {
      removeTempDir(fx.dir);
    }
  });
});

describe('a receipt past what its seal line holds', () => {
  it('five hook events naming 3,500 unknown 4 KB fields each: the close seals, the receipt leaves the unknown section out and says so, receipt_complete fails', async () => {
    const fx = await makeFixture('tally-budget-unknown-');
    try {
      const { info } = await startSession({ state: fx.state, root: fx.root, signer: fx.signer });
      // 14 MB each, within what the recorder takes in one request; together 70 MB of names the
      // receipt's unknown section listed, and the close failed at every try.
      for (let e = 0; e < 5; e++) {
        const event: Record<string, unknown> = toolBefore(`c${e}`, 'Bash', { command: 'ls' });
        for (let i = 0; i < 3500; i++) event[`x${e}_${i}_${'y'.repeat(4000)}`] = 1;
        await recordEvent({
          state: fx.state,
          session: readSessionInfo(fx.state, info.id),
          signer: fx.signer,
          source: 'hook',
          event,
        });
      }
      const pkg = await closePackage(fx, info.id);
      const receipt = packageReceipt(pkg);
      assert.deepEqual(receipt.sections_omitted, ['unknown']);
      assert.deepEqual(receipt.unknown, { types: [], fields: [] });
      assert.equal(receipt.processes.length, 5);
      const verified = await verifyPackage(pkg, {
        trusted: [toPublicKey(fx.signer.privateKey)],
        now: new Date(),
      });
      assert.deepEqual(
        verified.checks
          .filter((c) => !c.ok)
          .map((c) => [c.check, c.code, (c.detail as { sections?: string[] }).sections]),
        [['receipt_complete', 'rows-omitted', ['unknown']]],
      );
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('a receipt longer than a string may be is measured and cut, not a close that throws', async () => {
    const fx = await makeFixture('tally-budget-huge-');
    try {
      const run = await runSession(fx, variedEvents(fx.root));
      const receipt = packageReceipt(run.bytes);
      assert.equal(jsonBytesWithin(receipt, Number.POSITIVE_INFINITY), jsonBytes(receipt));
      assert.equal(jsonBytesWithin(receipt, jsonBytes(receipt) - 1), jsonBytes(receipt));
      // 50 unknown fields of 12 MB names (each within what the recorder takes in one event): 600 MB
      // of JSON, past the longest string JSON.stringify can make.
      const name = 'y'.repeat(12 * 1024 * 1024);
      const huge = structuredClone(receipt);
      for (let i = 0; i < 50; i++)
        huge.unknown.fields.push({ type: 'tool.before', field: name, count: 1, first_seq: i });
      assert.throws(() => jsonBytes(huge), RangeError);
      const fitted = fitReceipt(huge);
      assert.deepEqual(fitted.sections_omitted, ['unknown']);
      assert.deepEqual(fitted.files_written, receipt.files_written);
    } finally {
      removeTempDir(fx.dir);
    }
  });

  it('gives up whole sections in their order until it fits, and leaves one that fits as it is', async () => {
    const fx = await makeFixture('tally-budget-fit-');
    try {
      const run = await runSession(fx, variedEvents(fx.root));
      const receipt = packageReceipt(run.bytes);
      assert.equal(receipt.sections_omitted, undefined);
      const whole = jsonBytes(receipt);
      assert.deepEqual(fitReceipt(structuredClone(receipt), whole), receipt);
      // One byte less: sections go in order until one gave up bytes (this session has no unknown
      // types or fields, so the timeline is the first), and the receipt names them.
      assert.deepEqual(receipt.unknown, { types: [], fields: [] });
      const fitted = fitReceipt(structuredClone(receipt), whole - 1);
      assert.deepEqual(fitted.sections_omitted, ['unknown', 'timeline']);
      assert.deepEqual(fitted.timeline, []);
      assert.deepEqual(fitted.decisions, receipt.decisions);
      // A bound nothing fits: every section goes, in order, and the totals stay.
      const bare = fitReceipt(structuredClone(receipt), 1);
      assert.deepEqual(bare.sections_omitted, [
        'unknown',
        'timeline',
        'counts.events_by_type',
        'agent_graph',
        'decisions',
        'processes',
        'tool_calls',
        'network',
        'files_read',
        'session.harness_sessions',
        'session.baseline',
        'session.since',
      ]);
      assert.deepEqual(bare.files_written, receipt.files_written);
      assert.deepEqual(bare.counts.files_read, receipt.counts.files_read);
    } finally {
      removeTempDir(fx.dir);
    }
  });
});

describe('the receipt’s share for its open-ended lists', () => {
  it('takes rows in the lists’ order while they fit, and leaves every list after the cut empty', () => {
    // Each row below is 10 bytes of JSON (8 characters and two quotes) and one of separator.
    const row = (c: string) => c.repeat(8);
    const [a, b, c] = shareRows([[row('a'), row('b')], [row('c'), row('d'), row('e')], ['f']], 40);
    assert.deepEqual(a, { rows: [row('a'), row('b')], omitted: 0 });
    assert.deepEqual(b, { rows: [row('c')], omitted: 2 });
    // The budget closed at 'd' (44 > 40): 'f' (4 bytes) would fit what is left, yet nothing after the cut is taken.
    assert.deepEqual(c, { rows: [], omitted: 1 });
    assert.deepEqual(omittedField('network', b), { network_omitted: { count: 2 } });
    assert.deepEqual(omittedField('network', a), {});
  });
});
