/**
 * Codex's Bash hooks as the model's own `exec_command` calls, with the `tty` the hook leaves out,
 * read from the thread's rollout. Oracle: the pinned Codex (test/agents/README.md): a PreToolUse
 * for `exec_command {cmd: "bash", tty: true}` carries only `tool_name: "Bash", tool_input:
 * {command: "bash"}`, and the rollout named by its `transcript_path` already holds the model's call
 * as a `response_item` `function_call` line with the hook's `tool_use_id` as `call_id` (the lines
 * below have the shape of that rollout, cut to what matters).
 */
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { translateCodex } from '../../src/capture/codex/translate.js';
import type { JsonObject } from '../../src/core/json.js';
import { removeTempDir, tempDir } from '../temp.js';

const dir = tempDir('tally-codex-rollout-');
after(() => removeTempDir(dir));

const line = (type: string, payload: JsonObject) =>
  `${JSON.stringify({ timestamp: '2026-12-06T03:56:39.742Z', type, payload })}\n`;
const fnCall = (callId: string, args: JsonObject, name = 'exec_command') =>
  line('response_item', {
    type: 'function_call',
    status: 'completed',
    id: `fc_${callId}`,
    name,
    arguments: JSON.stringify(args),
    call_id: callId,
  });
const output = (callId: string) =>
  line('response_item', { type: 'function_call_output', call_id: callId, output: 'Process exited' });
const head = () =>
  line('session_meta', { id: 't', model_provider: 'scripted' }) +
  line('turn_context', { cwd: '/p' }) +
  line('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] });

let files = 0;
function rollout(text: string): string {
  const path = join(dir, `rollout-2026-12-06T03-56-39-${files++}.jsonl`);
  writeFileSync(path, text);
  return path;
}

function hook(path: string, call: string, command: string, event = 'PreToolUse'): JsonObject {
  const captured = translateCodex({
    session_id: 't',
    turn_id: 'turn',
    transcript_path: path,
    cwd: '/p',
    hook_event_name: event,
    model: 'gpt-5.5',
    permission_mode: 'bypassPermissions',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: call,
    ...(event === 'PostToolUse' ? { tool_response: '' } : {}),
  });
  return captured.event;
}
const tool = (event: JsonObject) => event.tool as JsonObject;

describe('Codex shell calls carry the tty the rollout shows', () => {
  it('exec_command with its tty, found by the hook’s call id', () => {
    const path = rollout(
      head() +
        fnCall('call_0', { cmd: 'bash', tty: true, workdir: '/p', yield_time_ms: 500 }) +
        output('call_0') +
        fnCall('call_1', { cmd: 'echo two' }),
    );
    const tty = hook(path, 'call_0', 'bash');
    assert.deepEqual(tool(tty), {
      origin: 'native',
      name: 'exec_command',
      kind: 'shell',
      input: { command: 'bash', tty: true },
    });
    const ext = (tty.extensions as JsonObject)['dev.tally.native'] as JsonObject;
    assert.equal(ext.hook_tool, 'Bash');
    assert.equal(ext.rollout_call, 'found');
    assert.deepEqual(tool(hook(path, 'call_1', 'echo two')).input, { command: 'echo two', tty: false });
  });

  it('a call the rollout does not show is taken to be on a terminal', () => {
    const path = rollout(head() + fnCall('call_0', { cmd: 'echo one' }));
    for (const [file, call, command] of [
      [path, 'call_9', 'echo one'], // no such call
      [path, 'call_0', 'bash'], // another command under that id
      [join(dir, 'rollout-missing.jsonl'), 'call_0', 'echo one'], // no file
      [join(dir, 'not-a-rollout.jsonl'), 'call_0', 'echo one'], // not a rollout's name
    ] as const) {
      const event = hook(file, call, command);
      assert.deepEqual(tool(event).input, { command, tty: true }, `${file} ${call}`);
      assert.equal(tool(event).name, 'exec_command');
      assert.equal(
        ((event.extensions as JsonObject)['dev.tally.native'] as JsonObject).rollout_call,
        'not found',
      );
    }
  });

  it('a response that repeats a call id is on a terminal if any of its calls is', () => {
    const both = rollout(
      head() + fnCall('dup', { cmd: 'git log', tty: true }) + fnCall('dup', { cmd: 'git log', tty: false }),
    );
    assert.equal((tool(hook(both, 'dup', 'git log')).input as JsonObject).tty, true);
    // An earlier response's call under the same id is another call: its tty does not count.
    const earlier = rollout(
      head() +
        fnCall('dup', { cmd: 'git log', tty: true }) +
        output('dup') +
        fnCall('dup', { cmd: 'git log' }),
    );
    assert.equal((tool(hook(earlier, 'dup', 'git log')).input as JsonObject).tty, false);
  });

  it('the after event reports the input its before did; a later call under the same id is read again', () => {
    const path = rollout(head() + fnCall('c', { cmd: 'bash', tty: false }));
    assert.equal((tool(hook(path, 'c', 'bash')).input as JsonObject).tty, false);
    // The rollout moves on (a later response reuses the id, on a terminal); the after keeps the before's.
    appendFileSync(path, output('c') + fnCall('c', { cmd: 'bash', tty: true }));
    assert.equal((tool(hook(path, 'c', 'bash', 'PostToolUse')).input as JsonObject).tty, false);
    // The next before under that id reads the rollout again, whatever an earlier call left.
    assert.equal((tool(hook(path, 'c', 'bash')).input as JsonObject).tty, true);
  });

  it('a call far back in a long rollout is still found; a line being written is not read', () => {
    const filler = line('event_msg', { type: 'token_count', text: 'x'.repeat(4000) });
    const path = rollout(head() + fnCall('far', { cmd: 'ls', tty: true }) + filler.repeat(300));
    assert.equal((tool(hook(path, 'far', 'ls')).input as JsonObject).tty, true);
    const partial = rollout(head() + fnCall('cut', { cmd: 'ls', tty: false }).slice(0, -1));
    assert.equal((tool(hook(partial, 'cut', 'ls')).input as JsonObject).tty, true, 'not found: terminal');
  });

  it('apply_patch and other tools are left as Codex named them', () => {
    const path = rollout(head());
    const patch = translateCodex({
      session_id: 't',
      transcript_path: path,
      cwd: '/p',
      hook_event_name: 'PreToolUse',
      tool_name: 'apply_patch',
      tool_input: { command: '*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n' },
      tool_use_id: 'p1',
    }).event;
    assert.equal(tool(patch).name, 'apply_patch');
    assert.equal(
      ((patch.extensions as JsonObject)['dev.tally.native'] as JsonObject).rollout_call,
      undefined,
    );
  });
});
