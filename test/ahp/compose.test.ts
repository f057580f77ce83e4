/**
 * Effect composition rules, each worked out by hand from the AHP edit and composition rules
 * (AHP-EDIT-001, composition precedence, continuation allowance), not from running the code.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type InterceptCapabilities,
  type Pipeline,
  settle,
  stageResponse,
  startPipeline,
} from '../../src/ahp/harness/compose.js';
import type { CanonicalEvent } from '../../src/evidence/record/record.js';

const supplier = { backend: 'org.example.a', subscription: 's' };

function text(id: string, body: string) {
  return { id, kind: 'text', mediaType: 'text/plain', selection: 'body', text: body };
}
function message(id: string, role: string, body: string) {
  return { id, role, parts: [text(`${id}-p`, body)] };
}

const turnStart: CanonicalEvent = {
  id: 'e1',
  source: 'urn:test',
  type: 'turn.start',
  time: '2026-01-01T00:00:00Z',
  turn: { id: 't1' },
  trigger: 'user',
  items: [message('m1', 'user', 'hello')],
};
const promptCaps: InterceptCapabilities = {
  effects: ['deny', 'modify', 'message'],
  modify: { prompt: { replace: true, merge: true } },
};

function stage(p: Pipeline, effects: unknown[], caps: InterceptCapabilities, view?: object) {
  return stageResponse(p, effects, { capabilities: caps, view: (view ?? p.event) as never, supplier });
}

test('list merge appends in order and keeps duplicates', () => {
  const p = startPipeline(turnStart);
  const extra = message('m1', 'user', 'hello');
  const out = stage(
    p,
    [{ type: 'modify', target: 'prompt', operation: 'merge', value: [extra, extra] }],
    promptCaps,
  );
  assert.ok('pipeline' in out);
  assert.deepStrictEqual(out.pipeline.event.items, [message('m1', 'user', 'hello'), extra, extra]);
});

test('list replace substitutes the whole list', () => {
  const p = startPipeline(turnStart);
  const out = stage(p, [{ type: 'modify', target: 'prompt', operation: 'replace', value: [] }], promptCaps);
  assert.ok('pipeline' in out);
  assert.deepStrictEqual(out.pipeline.event.items, []);
});

test('a whole-list replace is refused when the subscription saw withheld content', () => {
  const p = startPipeline(turnStart);
  const view = { ...turnStart, items: [] };
  const out = stage(
    p,
    [{ type: 'modify', target: 'prompt', operation: 'replace', value: [] }],
    promptCaps,
    view,
  );
  assert.ok('error' in out);
  // The pipeline given in is untouched.
  assert.deepStrictEqual(p.event, turnStart);
});

const toolBefore: CanonicalEvent = {
  id: 'e2',
  source: 'urn:test',
  type: 'tool.before',
  time: '2026-01-01T00:00:00Z',
  call: { id: 'c' },
  path: 'native',
  tool: { name: 'x', origin: 'native', input: { a: { deep: 1 }, b: 2 } },
};
const toolCaps: InterceptCapabilities = {
  effects: ['deny', 'allow', 'ask', 'modify', 'return', 'message'],
  modify: { input: { replace: true, merge: true } },
};

test('object merge is shallow and null is a literal value', () => {
  const out = stage(
    startPipeline(toolBefore),
    [{ type: 'modify', target: 'input', operation: 'merge', value: { a: { other: 3 }, b: null } }],
    toolCaps,
  );
  assert.ok('pipeline' in out);
  assert.deepStrictEqual((out.pipeline.event.tool as { input: unknown }).input, { a: { other: 3 }, b: null });
});

test('a target the boundary does not have rejects the response', () => {
  const caps = { ...toolCaps, modify: { output: { replace: true, merge: true } } };
  const out = stage(
    startPipeline(toolBefore),
    [{ type: 'modify', target: 'output', operation: 'merge', value: [] }],
    caps,
  );
  assert.ok('error' in out);
});

test('a later allow does not lift an ask; deny beats both and drops the candidate', () => {
  let p = startPipeline(toolBefore);
  let out = stage(p, [{ type: 'ask' }, { type: 'return', value: 1 }], toolCaps);
  assert.ok('pipeline' in out);
  p = out.pipeline;
  out = stage(p, [{ type: 'allow' }], toolCaps);
  assert.ok('pipeline' in out);
  assert.equal(settle(out.pipeline, toolCaps).decision, 'ask');
  out = stage(out.pipeline, [{ type: 'deny', reason: 'no' }], toolCaps);
  assert.ok('pipeline' in out);
  const settled = settle(out.pipeline, toolCaps);
  assert.equal(settled.decision, 'deny');
  assert.equal(out.pipeline.candidate, null);
  assert.equal('result' in settled, false);
  assert.deepStrictEqual(out.pipeline.denial, { ...supplier, reason: 'no', synthetic: false });
});

test('an unchanged rewrite keeps an earlier allow and candidate; a real change drops them', () => {
  const state = { permission: 'allow' as const, candidate: { value: 'cached' } };
  const same = stage(
    startPipeline(toolBefore, state),
    [{ type: 'modify', target: 'input', operation: 'replace', value: { b: 2, a: { deep: 1 } } }],
    toolCaps,
  );
  assert.ok('pipeline' in same);
  assert.equal(same.pipeline.permission, 'allow');
  assert.deepStrictEqual(settle(same.pipeline, toolCaps).result, 'cached');
  const changed = stage(
    startPipeline(toolBefore, state),
    [{ type: 'modify', target: 'input', operation: 'merge', value: { b: 3 } }],
    toolCaps,
  );
  assert.ok('pipeline' in changed);
  assert.equal(changed.pipeline.permission, 'none');
  assert.equal(changed.pipeline.candidate, null);
  assert.equal(settle(changed.pipeline, toolCaps).executed, true);
});

test('continuations: one unit per boundary, none left rejects, stop keeps the allowance', () => {
  const finish: CanonicalEvent = {
    id: 'e3',
    source: 'urn:test',
    type: 'turn.finish.before',
    time: '2026-01-01T00:00:00Z',
    turn: { id: 't' },
    outcome: 'completed',
    continuationCount: 1,
    items: [],
  };
  const caps = (remaining: number): InterceptCapabilities => ({
    effects: ['flow'],
    flow: { operations: ['stop', 'continue'], remainingContinuations: remaining, continuationCount: 1 },
  });
  const first = stage(
    startPipeline(finish),
    [{ type: 'flow', operation: 'continue', instruction: 'a' }],
    caps(2),
  );
  assert.ok('pipeline' in first);
  const second = stage(first.pipeline, [{ type: 'flow', operation: 'continue', instruction: 'b' }], caps(2));
  assert.ok('pipeline' in second);
  const settled = settle(second.pipeline, caps(2));
  assert.deepStrictEqual(
    [settled.flow, settled.continuationInstructions, settled.continuationRemaining, settled.executed],
    ['continue', ['a', 'b'], 1, false],
  );
  assert.ok('error' in stage(startPipeline(finish), [{ type: 'flow', operation: 'continue' }], caps(0)));
  const stopped = stage(first.pipeline, [{ type: 'flow', operation: 'stop', reason: 'done' }], caps(2));
  assert.ok('pipeline' in stopped);
  assert.equal(settle(stopped.pipeline, caps(2)).continuationRemaining, 2);
});

test('an elicitation answer merges into the MCP answer content and stays serialized JSON', () => {
  const result: CanonicalEvent = {
    id: 'e4',
    source: 'urn:test',
    type: 'user.elicitation.result',
    time: '2026-01-01T00:00:00Z',
    parentEventId: 'e0',
    elicitation: {
      server: 'srv',
      mode: 'form',
      action: 'accept',
      result: text('r', JSON.stringify({ action: 'accept', content: { name: 'a', age: 3 } })),
    },
  };
  const caps: InterceptCapabilities = {
    effects: ['modify'],
    modify: { content: { replace: false, merge: true } },
  };
  const out = stage(
    startPipeline(result),
    [{ type: 'modify', target: 'content', operation: 'merge', value: { name: 'b' } }],
    caps,
  );
  assert.ok('pipeline' in out);
  const part = (out.pipeline.event.elicitation as { result: { text: string } }).result;
  assert.deepStrictEqual(JSON.parse(part.text), { action: 'accept', content: { name: 'b', age: 3 } });
});

test('unadvertised effects and operations are refused even if a validator let them through', () => {
  const caps: InterceptCapabilities = {
    effects: ['modify'],
    modify: { input: { replace: false, merge: true } },
  };
  assert.ok('error' in stage(startPipeline(toolBefore), [{ type: 'deny', reason: 'x' }], caps));
  assert.ok(
    'error' in
      stage(
        startPipeline(toolBefore),
        [{ type: 'modify', target: 'input', operation: 'replace', value: {} }],
        caps,
      ),
  );
});

test('an ask after a deny, in the same response or a later one, never weakens the deny', () => {
  const same = stage(startPipeline(toolBefore), [{ type: 'deny', reason: 'no' }, { type: 'ask' }], toolCaps);
  assert.ok('pipeline' in same);
  assert.equal(settle(same.pipeline, toolCaps).decision, 'deny');
  const later = stage(
    startPipeline(toolBefore, { permission: 'deny', candidate: null }),
    [{ type: 'ask' }, { type: 'allow' }],
    toolCaps,
  );
  assert.ok('pipeline' in later);
  assert.equal(settle(later.pipeline, toolCaps).decision, 'deny');
});

test('a refused response names the effect at fault by its full pointer in the response', () => {
  // The intercept response is a JSON-RPC object whose effects are at `result.effects`
  // (intercept-response.schema.json), so effect i is `/result/effects/i` (RFC 6901).
  const pointerOf = (out: ReturnType<typeof stage>) => {
    assert.ok('error' in out);
    assert.ok(out.error.startsWith(`${out.pointer}: `), out.error);
    return out.pointer;
  };
  const flowLess = stage(
    startPipeline(toolBefore),
    [{ type: 'message', text: 'a' }, { type: 'allow' }, { type: 'flow', operation: 'stop', reason: 'x' }],
    toolCaps,
  );
  assert.equal(pointerOf(flowLess), '/result/effects/2');
  assert.equal(pointerOf(stage(startPipeline(toolBefore), [42], toolCaps)), '/result/effects/0');
  const noTarget = stage(
    startPipeline(toolBefore),
    [
      { type: 'message', text: 'a' },
      { type: 'modify', target: 'output', operation: 'merge', value: [] },
    ],
    { ...toolCaps, modify: { output: { replace: true, merge: true } } },
  );
  assert.equal(pointerOf(noTarget), '/result/effects/1');
  const withheld = stage(
    startPipeline(turnStart),
    [
      { type: 'message', text: 'a' },
      { type: 'modify', target: 'prompt', operation: 'replace', value: [] },
    ],
    promptCaps,
    { ...turnStart, items: [] },
  );
  assert.equal(pointerOf(withheld), '/result/effects/1');
  // A continue with no remaining allowance rejects the response at the continue effect, even when
  // a stop in the same response wins the flow.
  const finish: CanonicalEvent = {
    id: 'e5',
    source: 'urn:test',
    type: 'turn.finish.before',
    time: '2026-01-01T00:00:00Z',
    turn: { id: 't1' },
    outcome: 'completed',
    continuationCount: 3,
    items: [],
  };
  const exhausted: InterceptCapabilities = {
    effects: ['flow', 'message'],
    flow: { operations: ['stop', 'continue'], remainingContinuations: 0, continuationCount: 3 },
  };
  const continued = stage(
    startPipeline(finish),
    [
      { type: 'message', text: 'a' },
      { type: 'flow', operation: 'stop', reason: 'done' },
      { type: 'flow', operation: 'continue', instruction: 'again' },
    ],
    exhausted,
  );
  assert.equal(pointerOf(continued), '/result/effects/2');
});
