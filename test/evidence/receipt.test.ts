import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { composeReceipt, RECEIPT_TYPE } from '../../src/evidence/receipt/receipt.js';
import { fixtureEvent, RecordList, ROOT_HEX } from './receipt-fixture.js';

const sha = (text: string): string => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

describe('composeReceipt: one session, section by section', () => {
  const list = new RecordList()
    .start()
    .toolBefore('c1', 'Read', { file_path: '/repo/README.md' })
    .toolAfter('c1', 'Read', { file_path: '/repo/README.md' }, 'ok')
    .toolBefore('c2', 'Bash', { command: 'npm test' })
    .toolAfter('c2', 'Bash', { command: 'npm test' }, 'error', {
      extra: { durationMs: 1250, extensions: { 'dev.tally.process': { exitCode: 1 } } },
    })
    .fileChanged([{ path: 'src/new.ts', operation: 'create', agentCaused: true }], { source: 'ahp' })
    .end();
  const receipt = composeReceipt(list.records, ROOT_HEX);

  it('names its type, carries the merkle root and the record count', () => {
    assert.equal(receipt.type, RECEIPT_TYPE);
    assert.equal(receipt.type, 'tally/receipt/v2');
    assert.equal(receipt.merkle_root, ROOT_HEX);
    assert.equal(receipt.record_count, 7);
  });

  it('takes the window from the records and the status from session.end', () => {
    assert.equal(receipt.session.id, 'ssn_test');
    assert.deepEqual(receipt.session.harness_sessions, ['harness_s1']);
    assert.equal(receipt.session.start, list.records[0]!.time);
    assert.equal(receipt.session.end, list.records[6]!.time);
    assert.equal(receipt.session.status, 'completed');
    assert.equal(receipt.session.end_reason, 'user exit');
    assert.equal(receipt.session.root, '/repo');
    assert.deepEqual(receipt.session.harness, { name: 'example', version: '1.0' });
  });

  it('promotes the Read into files_read, repo-relative, once for its two events', () => {
    assert.deepEqual(receipt.files_read, [
      { path: 'README.md', sources: ['hook'], agents: [], seqs: [1, 2] },
    ]);
  });

  it('promotes the shell call into processes with exit code and duration, even though it failed', () => {
    assert.deepEqual(receipt.processes, [
      {
        command: 'npm test',
        tool: 'Bash',
        call: 'c2',
        exit_code: 1,
        duration_ms: 1250,
        outcome: 'error',
        sources: ['hook'],
        agents: [],
        seqs: [3, 4],
      },
    ]);
  });

  it('feeds file.changed into files_written', () => {
    assert.deepEqual(receipt.files_written, [
      {
        path: 'src/new.ts',
        operation: 'created',
        agent_caused: true,
        sources: ['ahp'],
        agents: [],
        seqs: [5],
      },
    ]);
  });

  it('counts tool calls per tool: before + after of one call is one call', () => {
    assert.deepEqual(
      receipt.tool_calls.map((t) => [t.tool, t.kinds, t.count, t.native_names, t.outcomes]),
      [
        ['Bash', ['shell'], 1, ['Bash'], { error: 1 }],
        ['Read', ['read'], 1, ['Read'], { ok: 1 }],
      ],
    );
    assert.equal(receipt.counts.tool_calls, 2);
  });

  it('has one timeline entry per record, in order', () => {
    assert.deepEqual(
      receipt.timeline.map((t) => [t.seq, t.type, t.source]),
      [
        [0, 'session.start', 'hook'],
        [1, 'tool.before', 'hook'],
        [2, 'tool.after', 'hook'],
        [3, 'tool.before', 'hook'],
        [4, 'tool.after', 'hook'],
        [5, 'file.changed', 'ahp'],
        [6, 'session.end', 'hook'],
      ],
    );
  });

  it('counts events by type and source', () => {
    assert.deepEqual(receipt.counts.events_by_type, {
      'file.changed': 1,
      'session.end': 1,
      'session.start': 1,
      'tool.after': 2,
      'tool.before': 2,
    });
    assert.deepEqual(receipt.counts.events_by_source, { ahp: 1, hook: 6 });
    assert.equal(receipt.counts.records, 7);
  });
});

describe('composeReceipt: de-duplication across channels', () => {
  it('one file seen by hook (absolute), wrap (relative) and git-reconcile is one row with three sources', () => {
    const list = new RecordList()
      .start()
      .toolBefore('w1', 'Write', { file_path: '/repo/src/app.ts', content: 'x' })
      .toolAfter('w1', 'Write', { file_path: '/repo/src/app.ts', content: 'x' }, 'ok')
      .fileChanged([{ path: './src/app.ts', operation: 'update', agentCaused: true }], { source: 'wrap' })
      .fileChanged(
        [{ path: 'src/app.ts', operation: 'update', agentCaused: false }],
        { source: 'git-reconcile' },
        { 'dev.tally.changes': { 'src/app.ts': { additions: 3, deletions: 1, after: sha('x') } } },
      );
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(receipt.files_written, [
      {
        path: 'src/app.ts',
        operation: 'modified',
        after: sha('x'),
        additions: 3,
        deletions: 1,
        agent_caused: true,
        sources: ['git-reconcile', 'hook', 'wrap'],
        agents: [],
        seqs: [1, 2, 3, 4],
      },
    ]);
  });

  it('a Write no other channel saw is reported as written (create or overwrite unknown)', () => {
    const list = new RecordList().start().toolBefore('w1', 'Write', { file_path: 'docs\\guide.md' });
    const [row] = composeReceipt(list.records, ROOT_HEX).files_written;
    assert.equal(row?.path, 'docs/guide.md');
    assert.equal(row?.operation, 'written');
  });

  it('two spellings from two hooks and a Windows agent are one row', () => {
    const list = new RecordList()
      .start('C:\\work\\repo')
      .toolBefore('e1', 'Edit', { file_path: 'C:\\work\\repo\\lib\\a.ts' })
      .toolBefore('e2', 'edit_file', { target_file: 'lib/./b/../a.ts' }, { source: 'mcp' });
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(
      receipt.files_written.map((r) => [r.path, r.operation, r.sources]),
      [['lib/a.ts', 'modified', ['hook', 'mcp']]],
    );
  });

  it('keeps a path outside the repository absolute and flagged', () => {
    const list = new RecordList().start().toolBefore('r1', 'Read', { file_path: '/etc/hosts' });
    assert.deepEqual(composeReceipt(list.records, ROOT_HEX).files_read, [
      { path: '/etc/hosts', outside_repo: true, sources: ['hook'], agents: [], seqs: [1] },
    ]);
  });

  it('the same call id from two different harness sources is two calls', () => {
    const list = new RecordList()
      .start()
      .add({
        type: 'tool.before',
        source: 'urn:a',
        call: { id: 'c' },
        tool: { name: 'Read', input: {}, origin: 'native' },
        path: 'p',
      })
      .add({
        type: 'tool.before',
        source: 'urn:b',
        call: { id: 'c' },
        tool: { name: 'Read', input: {}, origin: 'native' },
        path: 'p',
      });
    assert.equal(composeReceipt(list.records, ROOT_HEX).tool_calls[0]?.count, 2);
  });
});

describe('composeReceipt: denied calls write nothing', () => {
  const deny = {
    decision: 'deny' as const,
    by: 'tally-policy',
    reason: 'forbidden: Write(.env)',
    rule: 'Write(.env)',
  };

  it('a Write denied by a recorded decision and reported denied is not in files_written', () => {
    const list = new RecordList()
      .start()
      .toolBefore('w1', 'Write', { file_path: '/repo/.env' }, { decision: deny })
      .toolAfter('w1', 'Write', { file_path: '/repo/.env' }, 'denied');
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(receipt.files_written, []);
    assert.deepEqual(receipt.decisions, [
      {
        seq: 1,
        decision: 'deny',
        by: 'tally-policy',
        via: 'record',
        event_type: 'tool.before',
        call: 'w1',
        tool: 'Write',
        reason: 'forbidden: Write(.env)',
        rule: 'Write(.env)',
      },
    ]);
    const write = receipt.tool_calls.find((t) => t.tool === 'Write');
    assert.deepEqual(write?.decisions, { allow: 0, ask: 0, deny: 1 });
    assert.equal(write?.not_run, 1);
    assert.equal(receipt.timeline[1]?.decision, 'deny');
  });

  it('a recorded deny with no tool.after is enough', () => {
    const list = new RecordList()
      .start()
      .toolBefore('w1', 'Write', { file_path: 'a.txt' }, { decision: deny });
    assert.deepEqual(composeReceipt(list.records, ROOT_HEX).files_written, []);
  });

  it('the AHP outcome alone is enough (official denied tool.after fixture)', () => {
    const list = new RecordList()
      .start()
      .add(fixtureEvent('execution-skipped-policy.valid.json'), { source: 'ahp' });
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(receipt.files_read, []);
    assert.equal(receipt.tool_calls[0]?.tool, 'Read');
    assert.deepEqual(receipt.tool_calls[0]?.outcomes, { denied: 1 });
  });

  it('a tool.permission.resolved deny is a decision by its decidedBy', () => {
    const list = new RecordList()
      .start()
      .toolBefore('w1', 'Write', { file_path: 'a.txt' })
      .add({
        type: 'tool.permission.resolved',
        call: { id: 'w1' },
        tool: { name: 'Write', input: { file_path: 'a.txt' }, origin: 'native' },
        path: 'native',
        decision: 'deny',
        decidedBy: 'user',
      });
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(receipt.files_written, []);
    assert.deepEqual(
      receipt.decisions.map((d) => [d.seq, d.decision, d.by, d.via]),
      [[2, 'deny', 'user', 'ahp']],
    );
  });

  it('an execution report wins over a deny that did not stick; a failed Write claims nothing', () => {
    const list = new RecordList()
      .start()
      .toolBefore('w1', 'Write', { file_path: 'ran.txt' }, { decision: deny })
      .toolAfter('w1', 'Write', { file_path: 'ran.txt' }, 'ok')
      .toolAfter('w2', 'Write', { file_path: 'failed.txt' }, 'error');
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(
      receipt.files_written.map((r) => r.path),
      ['ran.txt'],
    );
    assert.equal(receipt.decisions.length, 1);
  });
});
