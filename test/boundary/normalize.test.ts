/**
 * Record what was received, judge what it means: the record keeps the event as the harness sent
 * it; the judge and the receipt read it through one normalisation, so the path the judge matched
 * is the path the receipt's row shows — links included, resolved once live and recorded.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { normalizeCall } from '../../src/evidence/policy/judge.js';
import { composeReceipt } from '../../src/evidence/receipt/receipt.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { certificateFor, openFixture } from './fixture.js';

const ZERO_ROOT = '0'.repeat(64);

function sessionStart(root: string) {
  return {
    type: 'session.start',
    session: { id: 'h', cwd: root, workspaceRoots: [root] },
    trigger: 'startup',
    harness: { name: 'test' },
    permissionMode: 'default',
    items: [],
    extensions: { 'dev.tally.workspace': { root, baseline: { dirty: {} } } },
  };
}

function write(id: string, path: string, cwd: string) {
  const tool = {
    origin: 'native',
    name: 'Write',
    kind: 'file_write',
    input: { file_path: path, content: 'x' },
  };
  return {
    before: { type: 'tool.before', call: { id }, path: 'native', tool, session: { id: 'h', cwd } },
    after: {
      type: 'tool.after',
      call: { id },
      path: 'native',
      tool,
      session: { id: 'h', cwd },
      outcome: 'ok',
      execution: { status: 'executed' },
      items: [],
    },
  };
}

describe('one normalisation for the judge and the receipt', () => {
  it('a relative path from a nested cwd is judged and shown as the same repo-relative path', async () => {
    const f = await openFixture(certificateFor({ allow: ['Write(src/**)'] }), null);
    try {
      const cwd = join(f.root, 'src');
      mkdirSync(cwd, { recursive: true });
      await f.boundary.note({
        source: 'cli',
        event: { id: 'e0', time: new Date().toISOString(), source: 'urn:x', ...sessionStart(f.root) },
      });
      const call = write('c1', 'lib/a.ts', cwd);
      const d = await f.boundary.decide(call.before, { source: 'hook' });
      assert.equal(d.decision, 'allow', d.reason);
      await f.boundary.observe(call.after, { source: 'hook' });
      const records: EventRecord[] = await f.records();
      const judged = normalizeCall(records[1]!.event, { root: f.root, cwd: f.root });
      const receipt = composeReceipt(records, ZERO_ROOT);
      assert.deepEqual(
        judged?.paths.map((p) => p.path),
        receipt.files_written.map((r) => r.path),
      );
      assert.deepEqual(
        receipt.files_written.map((r) => r.path),
        ['src/lib/a.ts'],
      );
      // The record holds the event as it was received: the path as the harness wrote it.
      assert.equal((records[1]!.event.tool as { input: { file_path: string } }).input.file_path, 'lib/a.ts');
    } finally {
      await f.close();
    }
  });

  it('a write through a link to a forbidden file is judged by where it leads, and the link is recorded', async () => {
    const f = await openFixture(certificateFor({ allow: ['Write'], forbid: ['Write(.env)'] }), null);
    try {
      mkdirSync(join(f.root, 'docs'), { recursive: true });
      writeFileSync(join(f.root, '.env'), 'SECRET=1\n');
      symlinkSync(join(f.root, '.env'), join(f.root, 'docs', 'notes.md'));
      const call = write('c2', 'docs/notes.md', f.root);
      const d = await f.boundary.decide(call.before, { source: 'hook' });
      assert.equal(d.decision, 'deny');
      assert.equal(d.rule, 'Write(.env)');
      const [record] = (await f.records()).slice(-1);
      assert.deepEqual(record?.resolved, [{ path: 'docs/notes.md', resolved: join(f.root, '.env') }]);
      // The same call without the link is allowed: the verdict came from where it leads.
      const plain = write('c3', 'docs/other.md', f.root);
      assert.equal((await f.boundary.decide(plain.before, { source: 'hook' })).decision, 'allow');
    } finally {
      await f.close();
    }
  });
});
