/**
 * `files_written` in receipt v2: one row per path with its net operation over the session and every
 * source that saw it. Oracle: the rules of docs/receipt.md (net operation: existence at the start
 * from the earliest witness, at the end from the latest; the reconcile pass's start-versus-end
 * operation wins; a rename's source has no row of its own, unless the pass reported it: a channel's
 * rename the pass did not pair) — and v1 receipts keep one row per
 * (path, operation), as packages sealed before v2 were.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeReceipt } from '../../src/evidence/receipt/receipt.js';
import { RecordList, ROOT_HEX } from './receipt-fixture.js';

function summary(
  corroborated: Record<string, unknown>[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: 'tally.reconcile.summary',
    session: { id: 'ssn_test' },
    extensions: {
      'dev.tally.reconcile': { mode: 'git', corroborated, reported: 1, skipped: 0, limit: 10, ...extra },
    },
  };
}

function session(): RecordList {
  const list = new RecordList().start('/repo');
  // a.txt: a hook's Write, corroborated by the reconcile pass as created.
  list.toolBefore('c1', 'Write', { file_path: '/repo/a.txt', content: 'x' });
  list.toolAfter('c1', 'Write', { file_path: '/repo/a.txt', content: 'x' }, 'ok');
  // b.txt: edited, then removed as a harness reported.
  list.toolBefore('c2', 'Edit', { file_path: '/repo/b.txt', old_string: 'a', new_string: 'b' });
  list.toolAfter('c2', 'Edit', { file_path: '/repo/b.txt', old_string: 'a', new_string: 'b' }, 'ok');
  list.fileChanged([{ path: 'b.txt', operation: 'remove', agentCaused: true }]);
  // d.txt: edited, then renamed to e.txt by a shell command only the reconcile pass saw.
  list.toolBefore('c3', 'Edit', { file_path: '/repo/d.txt', old_string: 'a', new_string: 'b' });
  list.toolAfter('c3', 'Edit', { file_path: '/repo/d.txt', old_string: 'a', new_string: 'b' }, 'ok');
  // f.txt: created as one channel reported, then updated as another did.
  list.fileChanged([{ path: 'f.txt', operation: 'create', agentCaused: true }]);
  list.fileChanged([{ path: 'f.txt', operation: 'update', agentCaused: false }], { source: 'wrap' });
  list.fileChanged(
    [
      { path: 'e.txt', operation: 'create', agentCaused: false },
      { path: 'd.txt', operation: 'remove', agentCaused: false },
    ],
    { source: 'git-reconcile' },
    { 'dev.tally.changes': { 'e.txt': { from: 'd.txt' } } },
  );
  list.add(summary([{ path: 'a.txt', operation: 'created' }]), { source: 'git-reconcile' });
  return list.end();
}

describe('files_written: one row per path (v2)', () => {
  it('each path once, with its net operation and every source that saw it', () => {
    const receipt = composeReceipt(session().records, ROOT_HEX);
    assert.deepEqual(
      receipt.files_written.map((row) => [row.path, row.operation, row.from ?? null, row.sources]),
      [
        ['a.txt', 'created', null, ['git-reconcile', 'hook']],
        ['b.txt', 'deleted', null, ['hook']],
        ['e.txt', 'renamed', 'd.txt', ['git-reconcile', 'hook']],
        ['f.txt', 'created', null, ['hook', 'wrap']],
      ],
    );
    assert.equal(receipt.counts.files_written, 4);
    assert.ok(!receipt.unknown.types.some((t) => t.type === 'tally.reconcile.summary'));
  });

  it("a channel's rename the pass did not pair keeps the source's deletion as its own row", () => {
    // The agent deletes auth.js, writes an unrelated notes.txt and reports a rename of one into the
    // other; the pass compared the end with the start: one deleted, one created, contents apart.
    const rows = (extra: Record<string, unknown>) => {
      const list = new RecordList().start('/repo');
      list.fileChanged(
        [{ path: 'notes.txt', operation: 'create', agentCaused: true }],
        {},
        {
          'dev.tally.changes': { 'notes.txt': { from: 'auth.js' } },
        },
      );
      const corroborated = [
        { path: 'auth.js', operation: 'deleted' },
        { path: 'notes.txt', operation: 'created' },
      ];
      list.add(summary(corroborated, extra), { source: 'git-reconcile' });
      return composeReceipt(list.end().records, ROOT_HEX).files_written.map((row) => [
        row.path,
        row.operation,
        row.from ?? null,
        row.sources,
      ]);
    };
    assert.deepEqual(rows({ rename_sources: 'kept' }), [
      ['auth.js', 'deleted', null, ['git-reconcile']],
      ['notes.txt', 'created', null, ['git-reconcile', 'hook']],
    ]);
    // A summary sealed before that rule: the receipt is composed as it was signed, the source merged.
    assert.deepEqual(rows({}), [['notes.txt', 'created', null, ['git-reconcile', 'hook']]]);
  });

  it('v1 receipts keep one row per (path, operation)', () => {
    const records = session().records.map((r) => ({ ...r, v: 1 as const }));
    const receipt = composeReceipt(records, ROOT_HEX);
    const f = receipt.files_written.filter((row) => row.path === 'f.txt').map((row) => row.operation);
    assert.deepEqual(f, ['created', 'modified']);
  });
});
