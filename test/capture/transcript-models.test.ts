/**
 * Reading the model each agent ran on from a transcript as it grows (src/capture/claude-code/
 * models.ts), on lines shaped as the pinned Claude Code and Qwen Code write them
 * (test/agents/fixtures/<agent>/nested-subagent/files): only what was appended is read, a tool input
 * naming a model is not a model, and a path that is not a regular file is never waited on or read.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readFileSlice } from '../../src/capture/claude-code/harness-files.js';
import {
  claudeCodeModelLine,
  qwenCodeModelLine,
  TranscriptModels,
} from '../../src/capture/claude-code/models.js';

const root = mkdtempSync(join(tmpdir(), 'tally-transcript-models-'));
after(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const fresh = () => join(root, `t-${++files}.jsonl`);
const line = (value: unknown) => `${JSON.stringify(value)}\n`;

/** Claude Code's lines: an assistant message naming its model, and a tool result. */
const assistant = (model: string, extra: Record<string, unknown> = {}) =>
  line({
    type: 'assistant',
    isSidechain: false,
    message: { role: 'assistant', model, content: [] },
    ...extra,
  });
const toolUse = (input: Record<string, unknown>) =>
  line({
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', content: JSON.stringify(input) }] },
  });

describe('models from a Claude Code transcript', () => {
  it('follows the file as it grows: the latest assistant model, never a model a tool input names', () => {
    const path = fresh();
    const models = new TranscriptModels(claudeCodeModelLine);
    assert.equal(models.latest(path), undefined, 'no file yet');
    writeFileSync(path, line({ type: 'queue-operation' }));
    assert.equal(models.latest(path), undefined);
    appendFileSync(path, assistant('claude-opus-5-5'));
    assert.equal(models.latest(path), 'claude-opus-5-5');
    // The Agent tool's input names a model alias; the tool_use is in content, not message.model.
    appendFileSync(path, toolUse({ model: 'haiku' }));
    appendFileSync(
      path,
      line({ type: 'assistant', message: { content: [{ type: 'tool_use', input: { model: 'haiku' } }] } }),
    );
    assert.equal(models.latest(path), 'claude-opus-5-5');
    // Claude Code's own placeholder for a message no model wrote.
    appendFileSync(path, assistant('<synthetic>'));
    assert.equal(models.latest(path), 'claude-opus-5-5');
    appendFileSync(path, assistant('claude-haiku-5-5'));
    assert.equal(models.latest(path), 'claude-haiku-5-5');
    // A line still being written is read once it is whole.
    appendFileSync(path, assistant('claude-sonnet-5-5').slice(0, 20));
    assert.equal(models.latest(path), 'claude-haiku-5-5');
    appendFileSync(path, assistant('claude-sonnet-5-5').slice(20));
    assert.equal(models.latest(path), 'claude-sonnet-5-5');
  });

  it("keeps a subagent's lines apart by its agentId", () => {
    const path = fresh();
    writeFileSync(path, assistant('claude-haiku-5-5', { isSidechain: true, agentId: 'a1' }));
    const models = new TranscriptModels(claudeCodeModelLine);
    assert.equal(models.latest(path, 'a1'), 'claude-haiku-5-5');
    assert.equal(models.latest(path), undefined);
  });

  it('reads at most the newest 256 KiB of what was appended, and a file replaced afresh', () => {
    const path = fresh();
    const models = new TranscriptModels(claudeCodeModelLine);
    writeFileSync(path, assistant('old-model'));
    assert.equal(models.latest(path), 'old-model');
    // A megabyte of new lines: the model line inside it is older than the window; the last is read.
    const filler = line({ type: 'user', message: { content: 'x'.repeat(1000) } });
    appendFileSync(path, assistant('lost-model') + filler.repeat(1024) + assistant('new-model'));
    assert.equal(models.latest(path), 'new-model');
    const other = fresh();
    writeFileSync(other, assistant('replaced-model'));
    renameSync(other, path);
    assert.equal(models.latest(path), 'replaced-model');
  });

  it('never waits on a FIFO, follows no final symbolic link, reads no relative path', () => {
    const fifo = join(root, 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    const models = new TranscriptModels(claudeCodeModelLine);
    assert.equal(models.latest(fifo), undefined);
    const target = fresh();
    writeFileSync(target, assistant('linked-model'));
    const link = join(root, 'link.jsonl');
    symlinkSync(target, link);
    assert.equal(models.latest(link), undefined);
    assert.equal(readFileSlice('t-1.jsonl', 0, 100), undefined);
    assert.equal(models.latest(target), 'linked-model');
  });
});

describe('models from a Qwen Code transcript', () => {
  const response = (promptId: string, model: string, authType?: string) =>
    line({
      type: 'system',
      subtype: 'ui_telemetry',
      systemPayload: {
        uiEvent: {
          'event.name': 'qwen-code.api_response',
          model,
          prompt_id: promptId,
          ...(authType ? { auth_type: authType } : {}),
        },
      },
    });

  it("names each agent's model by the prompt id of its responses", () => {
    const path = fresh();
    writeFileSync(
      path,
      response('s1########0', 'main-model', 'openai') +
        line({ type: 'assistant', model: 'main-model', message: { role: 'model', parts: [] } }) +
        response('s1#general-purpose-call_m_0_0#0', 'sub-model', 'openai') +
        response('s1#x#y#0', 'nobody-model') +
        response('no-hash', 'nobody-model'),
    );
    const models = new TranscriptModels(qwenCodeModelLine);
    assert.equal(models.latest(path), 'main-model');
    assert.equal(models.latest(path, 'general-purpose-call_m_0_0'), 'sub-model');
    assert.equal(models.latest(path, 'x#y'), undefined);
  });
});
