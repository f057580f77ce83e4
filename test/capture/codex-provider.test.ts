/**
 * Codex's model provider, read from the thread's rollout file: a real SessionStart payload captured
 * from the pinned Codex (../shared/reference/agent-payloads) pointed at a rollout whose first line
 * is the `session_meta` shape the pinned Codex writes (test/agents/README.md; the real CLI's own
 * rollout is read in test/agents/codex-subagent.test.ts). The event stays valid AHP and the receipt's
 * agent graph names the provider beside the model.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { validateEvent } from '../../src/ahp/messages/index.js';
import { rolloutProvider } from '../../src/capture/codex/rollout.js';
import { MODEL_EXTENSION, translateCodex } from '../../src/capture/codex/translate.js';
import { AgentGraphBuilder } from '../../src/evidence/receipt/agents.js';
import type { EventRecord } from '../../src/evidence/record/record.js';

const PAYLOADS = new URL('../../../../shared/reference/agent-payloads/codex/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'tally-codex-provider-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function sessionStart(transcript: string): Record<string, unknown> {
  const doc = JSON.parse(readFileSync(join(PAYLOADS, 'cmd-SessionStart-1.json'), 'utf8')) as {
    body: Record<string, unknown>;
  };
  return { ...doc.body, transcript_path: transcript };
}

function meta(provider: unknown, instructions = 'You are Codex.'): string {
  return `${JSON.stringify({
    timestamp: '2026-12-02T14:02:35.567Z',
    type: 'session_meta',
    payload: {
      id: 't1',
      cli_version: '0.171.0',
      model_provider: provider,
      base_instructions: { text: instructions },
    },
  })}\n{"type":"turn_context","payload":{}}\n`;
}

describe('Codex model provider from the rollout', () => {
  it('is read from the session_meta line, even one longer than a read chunk', () => {
    const path = join(dir, 'rollout-2026-12-02T14-02-35-t1.jsonl');
    writeFileSync(path, meta('scripted', 'x'.repeat(200 * 1024)));
    assert.equal(rolloutProvider(path), 'scripted');
    const captured = translateCodex(sessionStart(path));
    assert.deepEqual((captured.event.extensions as Record<string, unknown>)[MODEL_EXTENSION], {
      provider: 'scripted',
    });
    // What the official validator says of every real Codex payload (native-adapters.test.ts) and no more.
    const kept = new Set(['event.unknown-type', 'unknown-field']);
    assert.deepEqual(
      validateEvent({ id: 'evt_test', time: '2026-12-02T00:00:00Z', ...captured.event }).filter(
        (i) => !kept.has(i.rule),
      ),
      [],
    );
  });

  it('names the provider beside the model in the agent graph', () => {
    const path = join(dir, 'rollout-2026-12-02T14-02-36-t2.jsonl');
    writeFileSync(path, meta('openai'));
    const event = translateCodex(sessionStart(path)).event as EventRecord['event'];
    const graph = new AgentGraphBuilder();
    graph.add({ seq: 1, agent: { name: 'coder', instance: 't2' }, event } as unknown as EventRecord);
    assert.deepEqual(graph.build().agents[0]!.models, [{ model: 'gpt-5.5', provider: 'openai' }]);
  });

  it('is found once the rollout exists, and is kept', () => {
    const path = join(dir, 'rollout-2026-12-02T14-02-37-t3.jsonl');
    assert.equal(rolloutProvider(path), undefined, 'not written yet');
    const extensions = translateCodex(sessionStart(path)).event.extensions as Record<string, unknown>;
    assert.equal(extensions[MODEL_EXTENSION], undefined);
    writeFileSync(path, meta('scripted'));
    assert.equal(rolloutProvider(path), 'scripted');
    rmSync(path);
    assert.equal(rolloutProvider(path), 'scripted', 'kept once found');
  });

  it('reads nothing but a rollout, and nothing that is not a provider name', () => {
    const other = join(dir, 'notes.jsonl');
    writeFileSync(other, meta('scripted'));
    assert.equal(rolloutProvider(other), undefined, 'a file not named like a rollout');
    const cases: [string, string][] = [
      ['rollout-a.jsonl', `${JSON.stringify({ type: 'turn_context', payload: { model_provider: 'x' } })}\n`],
      ['rollout-b.jsonl', meta(42)],
      ['rollout-c.jsonl', meta('two\nlines')],
      ['rollout-d.jsonl', meta('')],
      ['rollout-e.jsonl', 'not json\n'],
      ['rollout-f.jsonl', JSON.stringify({ type: 'session_meta', payload: { model_provider: 'x' } })],
    ];
    for (const [name, text] of cases) {
      const path = join(dir, name);
      writeFileSync(path, text);
      assert.equal(rolloutProvider(path), undefined, name);
    }
  });
});
