/**
 * Cursor reports no call id (its documented hook payloads carry conversation_id and generation_id
 * only). Two identical shell calls in one generation must still get two ids (a package with one id
 * for two calls fails `call_ids_unique`), each after naming its own before's; reads (before only)
 * and file edits (after only) each get an id of their own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adapterOf } from '../../src/capture/adapters.js';

const cursor = adapterOf('cursor')!;

function id(event: string, extra: Record<string, unknown>, conversation = 'c-1', generation = 'g-1'): string {
  const payload = {
    hook_event_name: event,
    conversation_id: conversation,
    generation_id: generation,
    workspace_roots: ['/repo'],
    ...extra,
  };
  return (cursor.translate(payload).event.call as { id: string }).id;
}
const shell = { command: 'npm test', cwd: '/repo' };

describe('Cursor call ids', () => {
  it('two identical shell calls in one generation get two ids, each after paired with its before', () => {
    const b1 = id('beforeShellExecution', shell);
    const a1 = id('afterShellExecution', { ...shell, output: 'ok', duration: 5 });
    const b2 = id('beforeShellExecution', shell);
    const a2 = id('afterShellExecution', { ...shell, output: 'ok', duration: 5 });
    assert.equal(a1, b1);
    assert.equal(a2, b2);
    assert.notEqual(b1, b2);
  });

  it('a denied call (no after) keeps its id to itself; other generations never pair', () => {
    const denied = id('beforeShellExecution', shell, 'c-2');
    const ran = id('beforeShellExecution', shell, 'c-2');
    const elsewhere = id('beforeShellExecution', shell, 'c-2', 'g-2');
    assert.equal(id('afterShellExecution', shell, 'c-2'), ran);
    assert.equal(id('afterShellExecution', shell, 'c-2', 'g-2'), elsewhere);
    assert.notEqual(denied, ran);
  });

  it('pairs MCP calls by tool and input', () => {
    const call = { tool_name: 'search', tool_input: '{"q":"x"}', command: 'mcp-server' };
    const before = id('beforeMCPExecution', call, 'c-3');
    const other = id('beforeMCPExecution', { ...call, tool_input: '{"q":"y"}' }, 'c-3');
    assert.equal(id('afterMCPExecution', { ...call, result_json: '{}' }, 'c-3'), before);
    assert.notEqual(before, other);
  });

  it('gives every read and every edit of the same file an id of its own', () => {
    const reads = [1, 2].map(() => id('beforeReadFile', { file_path: '/repo/a.ts', content: 'x' }, 'c-4'));
    const edits = [1, 2].map(() => id('afterFileEdit', { file_path: '/repo/a.ts', edits: [] }, 'c-4'));
    assert.equal(new Set([...reads, ...edits]).size, 4);
  });
});
