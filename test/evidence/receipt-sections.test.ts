import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { composeReceipt, ReceiptError } from '../../src/evidence/receipt/receipt.js';
import { fixtureEvent, RecordList, ROOT_HEX } from './receipt-fixture.js';

const sha = (text: string): string => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

describe('composeReceipt: agent graph', () => {
  const main = { name: 'claude-code', instance: 'main-1', model: 'claude-opus-4-7', provider: 'anthropic' };
  const sub = {
    name: 'explorer',
    instance: 'sub-1',
    parent: 'main-1',
    model: 'claude-haiku',
    provider: 'anthropic',
  };
  const orphan = { name: 'helper', instance: 'sub-9', parent: 'gone-7' };
  const list = new RecordList()
    .start('/repo')
    .toolBefore('t1', 'Task', { prompt: 'look around' }, { agent: main })
    .toolBefore('r1', 'Read', { file_path: 'a.ts' }, { agent: sub })
    .toolAfter('r1', 'Read', { file_path: 'a.ts' }, 'ok', { agent: sub })
    .add(
      {
        type: 'model.request.before',
        model: { id: 'gpt-5', provider: 'openai' },
        attempt: { id: 'a', number: 1 },
        params: {},
        items: [],
      },
      { agent: sub },
    )
    .add({ type: 'turn.start', turn: { id: 't' }, trigger: 'user', items: [] }, { agent: orphan });
  const graph = composeReceipt(list.records, ROOT_HEX).agent_graph;

  it('lists agents by id with parent links, children and roots', () => {
    assert.deepEqual(
      graph.agents.map((a) => [a.id, a.name, a.parent, a.children]),
      [
        ['main-1', 'claude-code', undefined, ['sub-1']],
        ['sub-1', 'explorer', 'main-1', []],
        ['sub-9', 'helper', 'gone-7', []],
      ],
    );
    assert.deepEqual(graph.roots, ['main-1', 'sub-9']);
    assert.equal(graph.agents[1]?.parent_seen, true);
    assert.equal(graph.agents[2]?.parent_seen, false);
  });

  it('gives model and provider per agent, from the attribution and from model events', () => {
    assert.deepEqual(graph.agents[0]?.models, [{ model: 'claude-opus-4-7', provider: 'anthropic' }]);
    assert.deepEqual(graph.agents[1]?.models, [
      { model: 'claude-haiku', provider: 'anthropic' },
      { model: 'gpt-5', provider: 'openai' },
    ]);
  });

  it('counts events and calls per agent, and the unattributed ones', () => {
    assert.deepEqual(
      graph.agents.map((a) => [a.id, a.event_count, a.tool_calls, a.first_seq, a.last_seq]),
      [
        ['main-1', 1, 1, 1, 1],
        ['sub-1', 3, 1, 2, 4],
        ['sub-9', 1, 0, 5, 5],
      ],
    );
    assert.equal(graph.unattributed_events, 1);
  });
});

describe('composeReceipt: renames', () => {
  it('a tool.after moved change is a rename with its source path', () => {
    const list = new RecordList().start().toolAfter('m1', 'Bash', { command: 'git mv old.ts new.ts' }, 'ok', {
      extra: {
        fileChanges: [{ path: '/repo/src/new.ts', change: 'moved', previousPath: '/repo/src/old.ts' }],
      },
    });
    assert.deepEqual(
      composeReceipt(list.records, ROOT_HEX).files_written.map((r) => [
        r.path,
        r.operation,
        r.from,
        r.sources,
      ]),
      [['src/new.ts', 'renamed', 'src/old.ts', ['hook']]],
    );
  });

  it('a reconcile rename (create + remove with a from fact) is one row, merged with the hook’s report', () => {
    const list = new RecordList()
      .start()
      .toolAfter('m1', 'Bash', { command: 'git mv a b' }, 'ok', {
        extra: { fileChanges: [{ path: 'src/new.ts', change: 'moved', previousPath: 'src/old.ts' }] },
      })
      .fileChanged(
        [
          { path: 'src/new.ts', operation: 'create', agentCaused: false },
          { path: 'src/old.ts', operation: 'remove', agentCaused: false },
        ],
        { source: 'git-reconcile' },
        { 'dev.tally.changes': { 'src/new.ts': { from: 'src/old.ts', additions: 0, deletions: 0 } } },
      );
    assert.deepEqual(composeReceipt(list.records, ROOT_HEX).files_written, [
      {
        path: 'src/new.ts',
        operation: 'renamed',
        from: 'src/old.ts',
        additions: 0,
        deletions: 0,
        agent_caused: true,
        sources: ['git-reconcile', 'hook'],
        agents: [],
        seqs: [1, 2],
      },
    ]);
  });
});

describe('composeReceipt: unknown types and fields are kept', () => {
  const list = new RecordList()
    .start()
    .add({ type: 'com.example.custom', payload: { anything: 1 } }, { source: 'ahp' })
    .add({ type: 'turn.start', turn: { id: 't1' }, trigger: 'user', items: [] })
    .add({ type: 'com.example.custom' })
    .add({
      type: 'tool.before',
      call: { id: 'x' },
      tool: { name: 'Read', input: {}, origin: 'native' },
      path: 'p',
      colour: 'red',
    });
  const receipt = composeReceipt(list.records, ROOT_HEX);

  it('lists types the receipt does not interpret, with counts and seqs', () => {
    assert.deepEqual(receipt.unknown.types, [
      { type: 'com.example.custom', count: 2, seqs: [1, 3] },
      { type: 'turn.start', count: 1, seqs: [2] },
    ]);
    assert.equal(receipt.counts.unknown_types, 2);
  });

  it('lists unknown fields of interpreted types', () => {
    assert.deepEqual(receipt.unknown.fields, [
      { type: 'tool.before', field: 'colour', count: 1, first_seq: 4 },
    ]);
  });

  it('keeps them in the timeline', () => {
    assert.deepEqual(
      receipt.timeline.filter((t) => t.type === 'com.example.custom').map((t) => [t.seq, t.source]),
      [
        [1, 'ahp'],
        [3, 'hook'],
      ],
    );
  });
});

describe('composeReceipt: network', () => {
  it('takes URLs from fetch tools and hosts from network events', () => {
    const list = new RecordList()
      .start()
      .toolBefore('f1', 'WebFetch', { url: 'https://Docs.Example.com/a?b=1', prompt: 'read' })
      .toolAfter('f1', 'WebFetch', { url: 'https://Docs.Example.com/a?b=1', prompt: 'read' }, 'ok', {
        source: 'ahp',
      })
      .add(
        { type: 'dev.tally.network.connect', host: 'Registry.Example.org', port: 443 },
        { source: 'wrap' },
      );
    assert.deepEqual(composeReceipt(list.records, ROOT_HEX).network, [
      { host: 'registry.example.org', port: 443, sources: ['wrap'], agents: [], seqs: [3] },
      {
        url: 'https://Docs.Example.com/a?b=1',
        host: 'docs.example.com',
        sources: ['ahp', 'hook'],
        agents: [],
        seqs: [1, 2],
      },
    ]);
  });
});

describe('composeReceipt: baseline', () => {
  it('does not blame the session for a file dirty before it started and unchanged since', () => {
    const dirty = sha('draft notes\n');
    const list = new RecordList()
      .start('/repo', {
        extensions: {
          'dev.tally.workspace': {
            root: '/repo',
            baseline: { commit: 'c0ffee', dirty: { 'notes.txt': dirty, 'b.txt': sha('b0') } },
          },
        },
      })
      .fileChanged(
        [
          { path: 'notes.txt', operation: 'update', agentCaused: false },
          { path: 'b.txt', operation: 'update', agentCaused: false },
        ],
        { source: 'git-reconcile' },
        { 'dev.tally.changes': { 'notes.txt': { after: dirty }, 'b.txt': { after: sha('b1') } } },
      );
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(
      receipt.files_written.map((r) => [r.path, r.dirty_at_start, r.after]),
      [['b.txt', true, sha('b1')]],
    );
    assert.deepEqual(receipt.session.baseline, {
      commit: 'c0ffee',
      dirty_at_start: ['b.txt', 'notes.txt'],
      unchanged_since_start: ['notes.txt'],
    });
  });
});

describe('composeReceipt: session without an end, MCP tools, bad input', () => {
  it('has no status when no session.end was recorded', () => {
    const receipt = composeReceipt(new RecordList().start().records, ROOT_HEX);
    assert.equal(Object.hasOwn(receipt.session, 'status'), false);
  });

  it('an MCP write_file tool is promoted by its own name and keeps the mcp label', () => {
    const list = new RecordList()
      .start()
      .toolBefore('m1', 'mcp__fs__write_file', { path: 'out/x.json' }, { source: 'mcp' });
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.deepEqual(
      receipt.files_written.map((r) => [r.path, r.operation, r.sources]),
      [['out/x.json', 'written', ['mcp']]],
    );
    assert.deepEqual(
      receipt.tool_calls.map((t) => [t.tool, t.kinds]),
      [['mcp__fs__write_file', ['mcp', 'write']]],
    );
  });

  it('reads the official session.start fixture', () => {
    const list = new RecordList().add(fixtureEvent('observe-session-start.valid.json'), { source: 'ahp' });
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.equal(receipt.session.root, '/repo');
    assert.deepEqual(receipt.session.harness_sessions, ['sess_observe_123']);
    assert.deepEqual(receipt.agent_graph.agents, []);
  });

  it('rejects a bad merkle root, out-of-order records and a foreign session, naming the field', () => {
    const list = new RecordList().start().add({ type: 'turn.start' });
    assert.throws(
      () => composeReceipt(list.records, 'AB'.repeat(32)),
      (e) => e instanceof ReceiptError && e.code === 'bad-merkle-root',
    );
    assert.throws(
      () => composeReceipt([], ROOT_HEX),
      (e) => e instanceof ReceiptError && e.code === 'no-records',
    );
    const swapped = [list.records[1]!, list.records[0]!];
    assert.throws(
      () => composeReceipt(swapped, ROOT_HEX),
      (e) => e instanceof ReceiptError && e.code === 'seq-order' && e.detail?.pointer === '/0/seq',
    );
    const foreign = [list.records[0]!, { ...list.records[1]!, session: 'other' }];
    assert.throws(
      () => composeReceipt(foreign, ROOT_HEX),
      (e) => e instanceof ReceiptError && e.code === 'session-mismatch' && e.detail?.pointer === '/1/session',
    );
  });

  it('rejects a record time that is not RFC 3339', () => {
    const list = new RecordList().start();
    const bad = [{ ...list.records[0]!, time: 'Jan 2 2026' }];
    assert.throws(
      () => composeReceipt(bad, ROOT_HEX),
      (e) => e instanceof ReceiptError && e.code === 'bad-record' && e.detail?.pointer === '/0/time',
    );
  });
});

describe('composeReceipt: batches and decisions outside tool calls', () => {
  const list = new RecordList()
    .start()
    .add(
      { type: 'turn.start', turn: { id: 't' }, trigger: 'user', items: [] },
      { decision: { decision: 'ask', by: 'com.example.guard' } },
    )
    .add({
      type: 'tool.batch.after',
      batch: { id: 'b1' },
      calls: [
        {
          call: { id: 'k1' },
          tool: { name: 'Read', input: { path: 'x.md' }, origin: 'native' },
          path: 'native',
          outcome: 'ok',
          execution: { status: 'executed' },
        },
        {
          call: { id: 'k2' },
          tool: { name: 'Write', input: { path: 'y.md' }, origin: 'native' },
          path: 'native',
          outcome: 'denied',
          execution: { status: 'skipped', reason: 'policy' },
        },
      ],
    });
  const receipt = composeReceipt(list.records, ROOT_HEX);

  it('treats each batch entry as a call with its own outcome', () => {
    assert.deepEqual(
      receipt.files_read.map((r) => r.path),
      ['x.md'],
    );
    assert.deepEqual(receipt.files_written, []);
    assert.deepEqual(
      receipt.tool_calls.map((t) => [t.tool, t.count, t.outcomes, t.not_run]),
      [
        ['Read', 1, { ok: 1 }, 0],
        ['Write', 1, { denied: 1 }, 1],
      ],
    );
  });

  it('lists a decision about a non-tool event without a call', () => {
    assert.deepEqual(receipt.decisions, [
      { seq: 1, decision: 'ask', by: 'com.example.guard', via: 'record', event_type: 'turn.start' },
    ]);
    assert.deepEqual(receipt.counts.decisions, { allow: 0, ask: 1, deny: 0 });
  });
});
