import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../../src/core/canonical.js';
import { composeReceipt, receiptBytes } from '../../src/evidence/receipt/receipt.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { RecordList, ROOT_HEX } from './receipt-fixture.js';

/** A session that exercises every section, with names whose order differs between locales. */
function session(): EventRecord[] {
  const main = { name: 'Ilk', instance: 'İ-main', model: 'm1', provider: 'p1' };
  const sub = { name: 'ılk', instance: 'ı-sub', parent: 'İ-main' };
  return new RecordList()
    .start('/repo')
    .toolBefore('c1', 'Write', { file_path: '/repo/Zeta.ts' }, { agent: main })
    .toolAfter('c1', 'Write', { file_path: '/repo/Zeta.ts' }, 'ok', {
      agent: main,
      extra: { durationMs: 0.1 },
    })
    .toolBefore('c2', 'Edit', { file_path: 'äpfel.ts' }, { agent: sub })
    .toolBefore(
      'c3',
      'Edit',
      { file_path: 'apple.ts' },
      { agent: sub, decision: { decision: 'ask', by: 'tally-policy' } },
    )
    .toolBefore('c4', 'Bash', { command: 'ls -la' }, { agent: main, source: 'wrap' })
    .toolBefore('c5', 'Edit', { file_path: 'apple.ts' }, { agent: main, source: 'Wrap' })
    .fileChanged(
      [
        { path: 'Zeta.ts', operation: 'update', agentCaused: true },
        { path: 'éclair.ts', operation: 'create', agentCaused: true },
      ],
      { source: 'git-reconcile' },
    )
    .add({ type: 'x.unknown', b: 1, a: 2 })
    .end().records;
}

/** The same JSON with every object's keys inserted in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse())
    out[key] = reverseKeys((value as Record<string, unknown>)[key]);
  return out;
}

describe('receipt determinism', () => {
  it('composing twice gives identical bytes', () => {
    const records = session();
    assert.deepEqual(
      receiptBytes(composeReceipt(records, ROOT_HEX)),
      receiptBytes(composeReceipt(records, ROOT_HEX)),
    );
  });

  it('the insertion order of object keys in the input does not matter', () => {
    const records = session();
    const reordered = reverseKeys(records) as EventRecord[];
    assert.notEqual(JSON.stringify(reordered), JSON.stringify(records));
    assert.deepEqual(
      receiptBytes(composeReceipt(reordered, ROOT_HEX)),
      receiptBytes(composeReceipt(records, ROOT_HEX)),
    );
  });

  it('a process with another time zone and locale produces the same bytes', () => {
    const records = session();
    const here = receiptBytes(composeReceipt(records, ROOT_HEX)).toString('base64');
    const module = fileURLToPath(new URL('../../src/evidence/receipt/receipt.js', import.meta.url));
    const script = [
      `import { composeReceipt, receiptBytes } from ${JSON.stringify(module)};`,
      `let input = '';`,
      `process.stdin.on('data', (d) => { input += d; });`,
      `process.stdin.on('end', () => {`,
      `  const records = JSON.parse(input);`,
      `  process.stdout.write(receiptBytes(composeReceipt(records, ${JSON.stringify(ROOT_HEX)})).toString('base64'));`,
      `});`,
    ].join('\n');
    for (const env of [
      { TZ: 'Pacific/Chatham', LANG: 'tr_TR.UTF-8', LC_ALL: 'tr_TR.UTF-8' },
      { TZ: 'America/St_Johns', LANG: 'de_DE.UTF-8', LC_ALL: 'de_DE.UTF-8' },
    ]) {
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        input: JSON.stringify(records),
        env: { PATH: process.env.PATH ?? '', ...env },
        encoding: 'utf8',
      });
      assert.equal(child.status, 0, child.stderr);
      assert.equal(child.stdout, here, `bytes differ under ${env.TZ} ${env.LANG}`);
    }
  });

  it('the bytes are canonical JSON of the receipt, with lists ordered by code units', () => {
    const receipt = composeReceipt(session(), ROOT_HEX);
    const bytes = receiptBytes(receipt);
    assert.deepEqual(parseJson(bytes.toString('utf8')), JSON.parse(JSON.stringify(receipt)));
    // Code-unit order puts capitals before lower case and ASCII before accented letters.
    assert.deepEqual(
      receipt.files_written.map((r) => r.path),
      ['Zeta.ts', 'apple.ts', 'äpfel.ts', 'éclair.ts'],
    );
    const apple = receipt.files_written.find((r) => r.path === 'apple.ts');
    assert.deepEqual(apple?.sources, ['Wrap', 'hook']);
    assert.deepEqual(apple?.agents, ['İ-main', 'ı-sub']);
    assert.deepEqual(
      receipt.agent_graph.agents.map((a) => a.id),
      ['İ-main', 'ı-sub'],
    );
  });
});
