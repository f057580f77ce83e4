/**
 * Gemini CLI reports no tool call id. Two identical calls in one session must still get two ids (a
 * package with one id for two calls fails `call_ids_unique`), each AfterTool must name its own
 * BeforeTool's, and a call denied before it ran (no AfterTool) must not lend its id to the next.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adapterOf } from '../../src/capture/adapters.js';

const gemini = adapterOf('gemini-cli')!;
let clock = 0;
function id(session: string, name: 'BeforeTool' | 'AfterTool', command = 'ls -la'): string {
  const payload = {
    session_id: session,
    transcript_path: '/repo/.gemini/t.json',
    cwd: '/repo',
    hook_event_name: name,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString(),
    tool_name: 'run_shell_command',
    tool_input: { command },
    ...(name === 'AfterTool' ? { tool_response: { llmContent: '' } } : {}),
  };
  return (gemini.translate(payload).event.call as { id: string }).id;
}

describe('Gemini CLI call ids', () => {
  it('two identical calls get two ids, each after paired with its before', () => {
    const b1 = id('g-a', 'BeforeTool');
    const a1 = id('g-a', 'AfterTool');
    const b2 = id('g-a', 'BeforeTool');
    const a2 = id('g-a', 'AfterTool');
    assert.equal(a1, b1);
    assert.equal(a2, b2);
    assert.notEqual(b1, b2);
  });

  it('a denied call (no AfterTool) keeps its id to itself', () => {
    const denied = id('g-b', 'BeforeTool');
    const ran = id('g-b', 'BeforeTool');
    assert.equal(id('g-b', 'AfterTool'), ran);
    assert.notEqual(denied, ran);
  });

  it('calls of other sessions or inputs never pair', () => {
    const here = id('g-c', 'BeforeTool');
    const other = id('g-d', 'BeforeTool');
    const otherInput = id('g-c', 'BeforeTool', 'pwd');
    assert.equal(id('g-c', 'AfterTool'), here);
    assert.equal(id('g-d', 'AfterTool'), other);
    assert.equal(id('g-c', 'AfterTool', 'pwd'), otherInput);
  });
});
