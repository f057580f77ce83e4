/**
 * The receipt's bounds (docs/receipt.md#bounds and #calls-in-progress): the first rows of each
 * unbounded section are listed, the rest summarised with explicit counts, and a session within the
 * bounds carries none of the fields the bounds add. Every expectation below follows from those
 * documented rules applied to records built here, not from running the composer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SeqList } from '../../src/evidence/receipt/bounds.js';
import { KeptGroups } from '../../src/evidence/receipt/groups.js';
import { composeReceipt, receiptBytes } from '../../src/evidence/receipt/receipt.js';
import { RecordList, ROOT_HEX } from './receipt-fixture.js';

const allow = {
  decision: 'allow' as const,
  by: 'tally-policy',
  rule: 'Read',
  reason: 'within bounded actions',
};

function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

describe('receipt bounds: decisions', () => {
  it('exactly 1,000 allows are all listed and nothing is summarised', () => {
    const list = new RecordList().start();
    for (let i = 0; i < 1000; i++)
      list.toolBefore(`c${i}`, 'Read', { file_path: 'a.ts' }, { decision: allow });
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.equal(receipt.decisions.length, 1000);
    assert.equal(receipt.decisions_omitted, undefined);
    assert.ok(!receiptBytes(receipt).toString().includes('decisions_omitted'));
  });

  it('allows past the first 1,000 are summarised per group; every deny is still listed', () => {
    const list = new RecordList().start(); // seq 0
    for (let i = 0; i < 1003; i++)
      list.toolBefore(`c${i}`, 'Read', { file_path: 'a.ts' }, { decision: allow });
    // seqs 1004 and 1005: two denies after the allow bound was reached.
    list.toolBefore('d1', 'Bash', { command: 'rm -rf /' }, { decision: { decision: 'deny', by: 'user' } });
    list.toolBefore('d2', 'Bash', { command: 'curl x' }, { decision: { decision: 'deny', by: 'user' } });
    const receipt = composeReceipt(list.records, ROOT_HEX);

    const listed = receipt.decisions.map((d) => [d.seq, d.decision]);
    assert.deepEqual(listed, [...range(1, 1000).map((s) => [s, 'allow']), [1004, 'deny'], [1005, 'deny']]);
    assert.deepEqual(receipt.decisions_omitted, {
      count: 3,
      groups: [
        {
          decision: 'allow',
          by: 'tally-policy',
          via: 'record',
          event_type: 'tool.before',
          tool: 'Read',
          rule: 'Read',
          count: 3,
          first_seq: 1001,
          last_seq: 1003,
        },
      ],
    });
    assert.deepEqual(receipt.counts.decisions, { allow: 1003, ask: 0, deny: 2 });
    const read = receipt.tool_calls.find((t) => t.tool === 'Read');
    assert.deepEqual(read?.decisions, { allow: 1003, ask: 0, deny: 0 });
  });
});

describe('receipt bounds: processes', () => {
  /** Call i runs `npm test` (even i) or `ls` (odd i), exit code 1 when i is a multiple of 3. */
  function shellSession(calls: number): RecordList {
    const list = new RecordList().start();
    for (let i = 0; i < calls; i++) {
      const input = { command: i % 2 === 0 ? 'npm test' : 'ls' };
      list.toolBefore(`c${i}`, 'Bash', input); // seq 2i + 1
      list.toolAfter(`c${i}`, 'Bash', input, 'ok', {
        extra: { extensions: { 'dev.tally.process': { exitCode: i % 3 === 0 ? 1 : 0 } } },
      }); // seq 2i + 2
    }
    return list;
  }

  it('1,000 processes are all rows, with no summary', () => {
    const receipt = composeReceipt(shellSession(1000).records, ROOT_HEX);
    assert.equal(receipt.processes.length, 1000);
    assert.equal(receipt.processes_omitted, undefined);
    assert.equal(receipt.counts.processes, 1000);
  });

  it('past 1,000 the rest are summarised per command with their exit codes and record range', () => {
    const receipt = composeReceipt(shellSession(1004).records, ROOT_HEX);
    assert.deepEqual(
      receipt.processes.map((p) => p.call),
      range(0, 1000).map((i) => `c${i}`),
    );
    // Left out: calls 1000 (npm test, exit 0), 1001 (ls, 0), 1002 (npm test, 1), 1003 (ls, 0).
    assert.deepEqual(receipt.processes_omitted, {
      count: 4,
      groups: [
        { command: 'ls', tool: 'Bash', count: 2, exit_codes: { '0': 2 }, first_seq: 2003, last_seq: 2008 },
        {
          command: 'npm test',
          tool: 'Bash',
          count: 2,
          exit_codes: { '0': 1, '1': 1 },
          first_seq: 2001,
          last_seq: 2006,
        },
      ],
    });
    assert.equal(receipt.counts.processes, 1004);
  });
});

describe('receipt bounds: summary groups', () => {
  /** Commands `cmd-0000` … in the order given, each run once after 1,000 listed `ls` processes. */
  function distinctCommands(order: number[]): RecordList {
    const list = new RecordList().start();
    for (let i = 0; i < 1000; i++) {
      list.toolBefore(`l${i}`, 'Bash', { command: 'ls' });
      list.toolAfter(`l${i}`, 'Bash', { command: 'ls' }, 'ok');
    }
    for (const n of order) {
      const command = { command: `cmd-${String(n).padStart(4, '0')}` };
      list.toolBefore(`c${n}`, 'Bash', command);
      list.toolAfter(`c${n}`, 'Bash', command, 'ok');
    }
    return list;
  }

  it('at most 1,000 process groups, the first in (command, tool) order; the rest counted', () => {
    // 1,005 distinct commands past the process rows, run in reverse order.
    const order = range(0, 1005).reverse();
    const receipt = composeReceipt(distinctCommands(order).records, ROOT_HEX);
    const omitted = receipt.processes_omitted;
    assert.equal(omitted?.count, 1005);
    assert.deepEqual(
      omitted?.groups.map((g) => g.command),
      range(0, 1000).map((n) => `cmd-${String(n).padStart(4, '0')}`),
    );
    // cmd-1000 … cmd-1004 ran first (reverse order): seqs 2001–2010.
    assert.deepEqual(omitted?.groups_omitted, { count: 5, first_seq: 2001, last_seq: 2010 });
    assert.equal(receipt.counts.processes, 2005);
  });

  it('which groups are kept does not depend on the order the calls are folded in', () => {
    // A fixed Fisher–Yates shuffle (seeded LCG), so the run is reproducible.
    let state = 7;
    const shuffled = range(0, 1005);
    for (let i = shuffled.length - 1; i > 0; i--) {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      const j = state % (i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j] as number, shuffled[i] as number];
    }
    const a = composeReceipt(distinctCommands(shuffled).records, ROOT_HEX).processes_omitted;
    const b = composeReceipt(distinctCommands(range(0, 1005)).records, ROOT_HEX).processes_omitted;
    assert.deepEqual(
      a?.groups.map((g) => g.command),
      b?.groups.map((g) => g.command),
    );
    assert.equal(a?.groups_omitted?.count, 5);
    assert.equal(b?.groups_omitted?.count, 5);
  });

  it('exactly 1,000 groups: no groups_omitted field', () => {
    const receipt = composeReceipt(distinctCommands(range(0, 1000)).records, ROOT_HEX);
    assert.equal(receipt.processes_omitted?.groups.length, 1000);
    assert.equal(receipt.processes_omitted?.groups_omitted, undefined);
    assert.ok(!receiptBytes(receipt).toString().includes('groups_omitted'));
  });

  it('decision groups are bounded the same way', () => {
    const list = new RecordList().start(); // seq 0
    for (let i = 0; i < 1000; i++)
      list.toolBefore(`c${i}`, 'Read', { file_path: 'a.ts' }, { decision: allow });
    // 1,002 allows past the bound, each under its own rule: rule-0000 … rule-1001.
    for (let i = 0; i < 1002; i++) {
      const rule = `rule-${String(i).padStart(4, '0')}`;
      list.toolBefore(`r${i}`, 'Read', { file_path: 'a.ts' }, { decision: { ...allow, rule } });
    }
    const receipt = composeReceipt(list.records, ROOT_HEX);
    const omitted = receipt.decisions_omitted;
    assert.equal(omitted?.count, 1002);
    assert.equal(omitted?.groups.length, 1000);
    assert.equal(omitted?.groups[999]?.rule, 'rule-0999');
    // rule-1000 and rule-1001: seqs 2001 and 2002.
    assert.deepEqual(omitted?.groups_omitted, { count: 2, first_seq: 2001, last_seq: 2002 });
  });
});

describe('receipt bounds: command text', () => {
  it('a command longer than 4,096 code units is clipped in processes rows with a count of what was cut', () => {
    const long = `echo ${'a'.repeat(10_000)}`;
    // A surrogate pair straddling the cut is kept whole or dropped whole, never split.
    const emoji = `${'b'.repeat(4095)}😀tail`;
    const list = new RecordList().start();
    for (const [i, command] of [long, emoji, 'ls'].entries()) {
      list.toolBefore(`c${i}`, 'Bash', { command });
      list.toolAfter(`c${i}`, 'Bash', { command }, 'ok');
    }
    const receipt = composeReceipt(list.records, ROOT_HEX);
    const [first, second, third] = receipt.processes.map((p) => p.command);
    assert.equal(first, `${long.slice(0, 4096)} … [${long.length - 4096} more characters]`);
    assert.equal(second, `${'b'.repeat(4095)} … [${emoji.length - 4095} more characters]`);
    assert.equal(third, 'ls');
    // Timeline summaries were bounded already (160 characters).
    assert.ok(receipt.timeline.every((t) => (t.summary ?? '').length <= 160));
    // The receipt is still canonical JSON: no lone surrogate was produced.
    assert.doesNotThrow(() => receiptBytes(receipt));
  });
});

describe('receipt bounds: seqs', () => {
  function readSession(calls: number): RecordList {
    const list = new RecordList().start();
    for (let i = 0; i < calls; i++) {
      list.toolBefore(`c${i}`, 'Read', { file_path: 'a.ts' }); // seq 2i + 1
      list.toolAfter(`c${i}`, 'Read', { file_path: 'a.ts' }, 'ok'); // seq 2i + 2
    }
    return list;
  }

  it('a row witnessed by exactly 1,000 records lists them all, with no seq_count', () => {
    const [row] = composeReceipt(readSession(500).records, ROOT_HEX).files_read;
    assert.deepEqual(row?.seqs, range(1, 1000));
    assert.equal(row?.seq_count, undefined);
  });

  it('a row witnessed by more lists the first 1,000 and counts them all', () => {
    const [row] = composeReceipt(readSession(600).records, ROOT_HEX).files_read;
    assert.deepEqual(row?.seqs, range(1, 1000));
    assert.equal(row?.seq_count, 1200);
  });

  it('an unknown event type lists its first 1,000 records; count has them all', () => {
    const list = new RecordList().start();
    for (let i = 0; i < 1005; i++) list.add({ type: 'x.custom' });
    const [type] = composeReceipt(list.records, ROOT_HEX).unknown.types;
    assert.deepEqual(type, { type: 'x.custom', count: 1005, seqs: range(1, 1000) });
  });
});

describe('receipt bounds: calls in progress', () => {
  function openCalls(n: number): RecordList {
    const list = new RecordList().start();
    for (let i = 0; i < n; i++) list.toolBefore(`c${i}`, 'Grep', { pattern: 'x' });
    return list;
  }

  it('with 10,000 calls open, a late tool.after still joins its call', () => {
    const list = openCalls(10_000).toolAfter('c0', 'Grep', { pattern: 'x' }, 'ok');
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.equal(receipt.counts.tool_calls, 10_000);
    assert.deepEqual(receipt.tool_calls[0]?.outcomes, { none: 9999, ok: 1 });
  });

  it('with 10,001, the least recently active call was folded, so its late tool.after is a new call', () => {
    const list = openCalls(10_001).toolAfter('c0', 'Grep', { pattern: 'x' }, 'ok');
    const receipt = composeReceipt(list.records, ROOT_HEX);
    assert.equal(receipt.counts.tool_calls, 10_002);
    assert.deepEqual(receipt.tool_calls[0]?.outcomes, { none: 10_001, ok: 1 });
  });

  /** n calls that each end (tool.before, tool.after), then a batch entry for c0 after them all. */
  function endedCalls(n: number): RecordList {
    const list = new RecordList().start();
    for (let i = 0; i < n; i++) {
      list.toolBefore(`c${i}`, 'Grep', { pattern: 'x' });
      list.toolAfter(`c${i}`, 'Grep', { pattern: 'x' }, 'ok');
    }
    return list.add({
      type: 'tool.batch.after',
      batch: { id: 'b1' },
      calls: [
        { call: { id: 'c0' }, tool: { name: 'Grep' }, outcome: 'ok', execution: { status: 'executed' } },
      ],
    });
  }

  it('with 1,000 ended calls, a late batch entry still joins its call', () => {
    const receipt = composeReceipt(endedCalls(1000).records, ROOT_HEX);
    assert.equal(receipt.counts.tool_calls, 1000);
  });

  it('with 1,001, the least recently active ended call was folded, so its late entry is a new call', () => {
    const receipt = composeReceipt(endedCalls(1001).records, ROOT_HEX);
    assert.equal(receipt.counts.tool_calls, 1002);
    assert.deepEqual(receipt.tool_calls[0]?.outcomes, { ok: 1002 });
  });

  it('a call kept active stays in the table, and processes stay in first-record order however calls fold', () => {
    const list = new RecordList().start();
    list.toolBefore('c0', 'Bash', { command: 'npm run dev' }); // seq 1, long-running
    for (let i = 1; i <= 10_500; i++) {
      list.toolBefore(`c${i}`, 'Bash', { command: 'ls' });
      list.toolAfter(`c${i}`, 'Bash', { command: 'ls' }, 'ok');
      if (i % 1000 === 0) list.add({ type: 'tool.progress', call: { id: 'c0' }, tool: { name: 'Bash' } });
    }
    list.toolAfter('c0', 'Bash', { command: 'npm run dev' }, 'ok');
    const receipt = composeReceipt(list.records, ROOT_HEX);
    // c0 never ended until the last record, so only the 10,000-open-calls bound could fold it.
    assert.equal(receipt.counts.tool_calls, 10_501);
    assert.deepEqual(
      receipt.processes.map((p) => p.call),
      range(0, 1000).map((i) => `c${i}`),
    );
    assert.equal(receipt.processes[0]?.command, 'npm run dev');
    assert.equal(receipt.processes[0]?.outcome, 'ok');
    assert.equal(receipt.processes_omitted?.count, 9501);
  });
});

describe('KeptGroups', () => {
  it('keeps what sorting every group and cutting at the bound would, whatever the arrival order', () => {
    let state = 99;
    const next = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    for (const max of [1, 3, 50]) {
      type G = { key: string; count: number; first_seq: number; last_seq: number };
      const order = (a: G, b: G) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
      const kept = new KeptGroups<G>(order, max);
      const oracle = new Map<string, G>();
      for (let seq = 0; seq < 3000; seq++) {
        const key = `k${next(400)}`;
        const all = oracle.get(key) ?? { key, count: 0, first_seq: seq, last_seq: seq };
        all.count++;
        all.last_seq = seq;
        oracle.set(key, all);
        const group = kept.group(key, () => ({ key, count: 0, first_seq: seq, last_seq: seq }));
        if (group === undefined) kept.countRest(1, seq, seq);
        else {
          group.count++;
          group.last_seq = seq;
        }
      }
      const sorted = [...oracle.values()].sort(order);
      const { groups, groups_omitted } = kept.result();
      assert.deepEqual(groups, sorted.slice(0, max), `max ${max}`);
      const rest = sorted.slice(max);
      assert.deepEqual(groups_omitted, {
        count: rest.reduce((n, g) => n + g.count, 0),
        first_seq: Math.min(...rest.map((g) => g.first_seq)),
        last_seq: Math.max(...rest.map((g) => g.last_seq)),
      });
    }
  });
});

describe('SeqList', () => {
  it('keeps distinct numbers ascending whatever order they arrive in, as a sorted Set would', () => {
    let state = 12345;
    const next = (): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % 5000;
    };
    const list = new SeqList();
    const oracle = new Set<number>();
    for (let i = 0; i < 20_000; i++) {
      const seq = i % 3 === 0 ? next() : i; // mostly ascending, with stragglers and repeats
      list.add(seq);
      oracle.add(seq);
    }
    const expected = [...oracle].sort((a, b) => a - b);
    assert.equal(list.size, expected.length);
    assert.deepEqual([...list], expected);
    assert.deepEqual(list.head(1000), expected.slice(0, 1000));
  });

  it('holds numbers past 2^32 exactly', () => {
    const list = new SeqList();
    for (const seq of [5, 2 ** 32 + 7, 3, 2 ** 32 + 7, 2 ** 40]) list.add(seq);
    assert.deepEqual([...list], [3, 5, 2 ** 32 + 7, 2 ** 40]);
  });
});
