/**
 * The reconcile pass's `tally.reconcile.corroborated` parts and its own `file.changed` reports: the
 * receipt reads those of the attempt its summary names, and no other — a close that died before
 * its summary left reports and parts no summary claims. Those that name no attempt (an earlier
 * version's) are read as they always were. The verifier fails `workspace_reconciled` for a summary
 * whose parts (`parts-mismatch`) or reports (`reports-mismatch`) the records do not hold as it counts
 * them, and lists those no summary claims. Oracles: the record shapes the close writes
 * (docs/reconcile.md) and packages re-signed by the key holder.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type VerifyResult, verifyPackage } from '../../src/evidence/package/verify.js';
import { composeReceipt } from '../../src/evidence/receipt/receipt.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { type Fixture, makeFixture, runSession } from '../session/fixture.js';
import { removeTempDir } from '../temp.js';
import { asInput, forgePackage, packageRecords } from './forge.js';
import { RecordList, ROOT_HEX } from './receipt-fixture.js';

/** A reconcile record's body: `corroborated` of `paths` (created), and `extra`. */
function body(paths: readonly string[], extra: Record<string, unknown>): Record<string, unknown> {
  return { corroborated: paths.map((path) => ({ path, operation: 'created' })), ...extra };
}

const PART = 'tally.reconcile.corroborated';
const SUMMARY = 'tally.reconcile.summary';
/** The pass's own `file.changed`: the paths of its body's `corroborated` are those it reports. */
const REPORT = 'file.changed';

function reconcileEvent(type: string, reconcile: Record<string, unknown>) {
  if (type !== REPORT)
    return { type, session: { id: 'ssn_test' }, extensions: { 'dev.tally.reconcile': reconcile } };
  const { corroborated, ...rest } = reconcile;
  const changes = (corroborated as Array<{ path: string }>).map(({ path }) => ({
    path,
    operation: 'create',
    agentCaused: false,
  }));
  // A report that names no attempt carries no reconcile extension, as an earlier version wrote it.
  return {
    type,
    session: { id: 'ssn_test' },
    changes,
    ...(Object.keys(rest).length > 0 ? { extensions: { 'dev.tally.reconcile': rest } } : {}),
  };
}

/** The hook reports a.txt, b.txt and c.txt created; then the pass's records, `passes`, in order. */
function session(passes: ReadonlyArray<[string, Record<string, unknown>]>): EventRecord[] {
  const list = new RecordList().start('/repo');
  list.fileChanged(
    ['a.txt', 'b.txt', 'c.txt'].map((path) => ({ path, operation: 'create', agentCaused: true })),
  );
  for (const [type, reconcile] of passes)
    list.add(reconcileEvent(type, reconcile), { source: 'git-reconcile' });
  return list.end().records;
}

/** Each row as [path, sources, seqs]. */
function rows(records: EventRecord[]): Array<[string, string[], number[]]> {
  return composeReceipt(records, ROOT_HEX).files_written.map((row) => [row.path, row.sources, row.seqs]);
}

describe('the receipt reads the parts its summary claims', () => {
  it('a part of an attempt no summary names is no witness; the summary’s own attempt’s are', () => {
    const records = session([
      [PART, body(['a.txt'], { attempt: 'dead', part: 2, parts: 2 })],
      [PART, body(['b.txt'], { attempt: 'live', part: 2, parts: 2 })],
      [SUMMARY, body(['c.txt'], { attempt: 'live', corroborated_parts: 2, mode: 'git', reported: 0 })],
    ]);
    assert.deepEqual(rows(records), [
      ['a.txt', ['hook'], [1]],
      ['b.txt', ['git-reconcile', 'hook'], [1, 3]],
      ['c.txt', ['git-reconcile', 'hook'], [1, 4]],
    ]);
  });

  it('a part after the summary is none of its own, whatever attempt it names', () => {
    const records = session([
      [SUMMARY, body(['c.txt'], { attempt: 'live', mode: 'git', reported: 0 })],
      [PART, body(['a.txt'], { attempt: 'live', part: 2, parts: 2 })],
    ]);
    assert.deepEqual(
      rows(records).map(([path, sources]) => [path, sources]),
      [
        ['a.txt', ['hook']],
        ['b.txt', ['hook']],
        ['c.txt', ['git-reconcile', 'hook']],
      ],
    );
  });

  it('a report of an attempt no summary names is no witness; one of the summary’s attempt is, at its own seq', () => {
    const records = session([
      [REPORT, body(['d.txt'], { attempt: 'dead' })],
      [REPORT, body(['e.txt'], { attempt: 'live' })],
      [SUMMARY, body(['c.txt'], { attempt: 'live', mode: 'git', reported: 1 })],
    ]);
    assert.deepEqual(rows(records), [
      ['a.txt', ['hook'], [1]],
      ['b.txt', ['hook'], [1]],
      ['c.txt', ['git-reconcile', 'hook'], [1, 4]],
      ['e.txt', ['git-reconcile'], [3]],
    ]);
  });

  it('a report after the summary is none of its own; one that names no attempt is read where it stands', () => {
    const records = session([
      [REPORT, body(['d.txt'], {})],
      [SUMMARY, body([], { attempt: 'live', mode: 'git', reported: 0 })],
      [REPORT, body(['e.txt'], { attempt: 'live' })],
    ]);
    assert.deepEqual(
      rows(records).filter(([path]) => path > 'c.txt'),
      [['d.txt', ['git-reconcile'], [2]]],
    );
  });

  it('parts and a summary that name no attempt (an earlier version’s) are each read where they stand, as before', () => {
    const records = session([
      [PART, body(['a.txt'], { part: 2, parts: 2 })],
      [PART, body(['b.txt'], { part: 2, parts: 2 })],
      [SUMMARY, body(['c.txt'], { corroborated_parts: 2, mode: 'git', reported: 0 })],
    ]);
    assert.deepEqual(rows(records), [
      ['a.txt', ['git-reconcile', 'hook'], [1, 2]],
      ['b.txt', ['git-reconcile', 'hook'], [1, 3]],
      ['c.txt', ['git-reconcile', 'hook'], [1, 4]],
    ]);
  });
});

describe('workspace_reconciled and the parts a summary counts (packages re-signed by the key holder)', () => {
  let fx: Fixture;
  let records: EventRecord[];

  before(async () => {
    fx = await makeFixture('tally-parts-');
    records = packageRecords((await runSession(fx, [])).bytes);
    assert.deepEqual(
      records.map((r) => r.event.type),
      ['session.start', SUMMARY, 'session.end'],
    );
  });
  after(() => removeTempDir(fx.dir));

  /**
   * The genuine session with `reports` (the pass's file.changed of a.txt, each body's extension)
   * and `parts` before its summary, whose body gets `summary` too. The genuine summary's attempt
   * is left out, so each record names the attempt the test gives it, or none.
   */
  async function verifyWith(
    parts: ReadonlyArray<Record<string, unknown>>,
    summary: Record<string, unknown>,
    reports: ReadonlyArray<Record<string, unknown>> = [],
  ): Promise<VerifyResult> {
    const [start, found, end] = records.map(asInput);
    const { attempt: _genuine, ...reconcile } = (
      found!.input.event.extensions as Record<string, Record<string, unknown>>
    )['dev.tally.reconcile']!;
    const event = (type: string, extra: Record<string, unknown>) => ({
      ...found!.input.event,
      id: `evt_${type}_${String(extra.part ?? '')}`,
      type,
      extensions: { 'dev.tally.reconcile': { ...reconcile, ...extra } },
    });
    const entries = [
      start!,
      ...reports.map((report, i) => ({
        input: {
          source: 'git-reconcile',
          event: {
            ...reconcileEvent(REPORT, body(['a.txt'], report)),
            id: `evt_report_${i}`,
            time: found!.input.event.time,
            source: found!.input.event.source,
          },
        },
        time: found!.time,
      })),
      ...parts.map((part) => ({
        input: { source: 'git-reconcile', event: event(PART, body(['a.txt'], part)) },
        time: found!.time,
      })),
      { ...found!, input: { ...found!.input, event: event(SUMMARY, summary) } },
      end!,
    ];
    const bytes = await forgePackage(fx.dir, records[0]!.session, fx.signer, entries);
    return verifyPackage(bytes, { trusted: [fx.signer.key.publicKey], now: new Date() });
  }

  function reconciled(result: VerifyResult) {
    const check = result.checks.find((c) => c.check === 'workspace_reconciled')!;
    return { ok: check.ok, code: check.code, detail: check.detail as Record<string, unknown> };
  }

  it('the parts the summary counts, each once: passes plainly', async () => {
    const result = await verifyWith(
      [
        { attempt: 'x', part: 2, parts: 3 },
        { attempt: 'x', part: 3, parts: 3 },
      ],
      {
        attempt: 'x',
        corroborated_parts: 3,
      },
    );
    assert.equal(result.ok, true);
    assert.equal(reconciled(result).code, 'ok');
  });

  it('a part the summary counts that is not there fails parts-mismatch', async () => {
    const result = await verifyWith([{ attempt: 'x', part: 2, parts: 3 }], {
      attempt: 'x',
      corroborated_parts: 3,
    });
    const check = reconciled(result);
    assert.deepEqual([check.ok, check.code], [false, 'parts-mismatch']);
    assert.deepEqual([check.detail.expected, check.detail.count], [2, 1]);
    assert.deepEqual(
      result.checks.filter((c) => !c.ok).map((c) => c.check),
      ['workspace_reconciled'],
    );
  });

  it('a part named twice fails parts-mismatch', async () => {
    const twice = { attempt: 'x', part: 2, parts: 2 };
    const check = reconciled(await verifyWith([twice, twice], { attempt: 'x', corroborated_parts: 2 }));
    assert.deepEqual([check.ok, check.code, check.detail.count], [false, 'parts-mismatch', 2]);
  });

  it('a summary that counts no part, with a part of its attempt before it, fails parts-mismatch', async () => {
    const check = reconciled(await verifyWith([{ attempt: 'x', part: 2, parts: 2 }], { attempt: 'x' }));
    assert.deepEqual([check.ok, check.code], [false, 'parts-mismatch']);
  });

  it('parts of an attempt that wrote no summary are listed, informational, and the package verifies', async () => {
    const result = await verifyWith(
      [
        { attempt: 'dead', part: 2, parts: 2 },
        { attempt: 'x', part: 2, parts: 2 },
      ],
      { attempt: 'x', corroborated_parts: 2 },
    );
    assert.equal(result.ok, true);
    const check = reconciled(result);
    assert.deepEqual([check.code, check.detail.unclaimed_parts], ['info', { seqs: [1], count: 1 }]);
  });

  it('reports of an attempt that wrote no summary are listed, informational; those of the summary’s attempt are as many as it says', async () => {
    const result = await verifyWith([], { attempt: 'x', reported: 1 }, [
      { attempt: 'dead' },
      { attempt: 'x' },
    ]);
    assert.equal(result.ok, true);
    const check = reconciled(result);
    assert.deepEqual([check.code, check.detail.unclaimed_reports], ['info', { seqs: [1], count: 1 }]);
  });

  it('a summary that says it reported other than the reports of its attempt fails reports-mismatch', async () => {
    const more = reconciled(await verifyWith([], { attempt: 'x', reported: 2 }, [{ attempt: 'x' }]));
    assert.deepEqual(
      [more.ok, more.code, more.detail.expected, more.detail.count, more.detail.seqs],
      [false, 'reports-mismatch', 2, 1, [1]],
    );
    const fewer = reconciled(await verifyWith([], { attempt: 'x', reported: 0 }, [{ attempt: 'x' }]));
    assert.deepEqual([fewer.ok, fewer.code], [false, 'reports-mismatch']);
  });

  it('reports, parts and a summary that name no attempt verify as they did', async () => {
    const result = await verifyWith([{ part: 2, parts: 2 }], { corroborated_parts: 2, reported: 1 }, [{}]);
    assert.equal(result.ok, true);
    assert.equal(reconciled(result).code, 'ok');
  });
});
