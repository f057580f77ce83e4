/**
 * The intercept call's deadline signal across calls: a call must never be handed a signal that an
 * earlier call's work can still observe (a listener left on it) or that already aborted.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { callWithDeadline } from '../../src/ahp/harness/call.js';
import { selectContentNoting } from '../../src/ahp/harness/content.js';
import { memoryTransport } from '../../src/ahp/transports/memory.js';
import type { JsonRpcRequest } from '../../src/ahp/transports/transport.js';

function request(id: string): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'hooks/intercept',
    params: { protocolVersion: 'draft', event: { id, type: 'tool.before' }, capabilities: { effects: [] } },
  };
}

const answer = (id: unknown) => ({ jsonrpc: '2.0', id, result: { protocolVersion: 'draft', effects: [] } });
const options = { timeoutMs: 5000, maxAttempts: 1, retryDelayMs: 0 };

test('a signal an earlier call left a listener on is not handed to the next call', async () => {
  const seen: AbortSignal[] = [];
  const transport = memoryTransport((message, signal) => {
    seen.push(signal);
    // The backend side keeps watching the first call's signal after answering.
    if (seen.length === 1) signal.addEventListener('abort', () => {});
    return answer('id' in message ? message.id : null);
  });
  for (const id of ['a', 'b', 'c']) {
    const result = await callWithDeadline(transport, request(id), options);
    assert.equal(result.kind, 'response');
  }
  assert.equal(seen.length, 3);
  assert.notEqual(seen[1], seen[0]);
  assert.notEqual(seen[2], seen[0]);
});

test('after a deadline, the next call gets a signal that has not aborted', async () => {
  const seen: { signal: AbortSignal; abortedAtStart: boolean }[] = [];
  const transport = memoryTransport((message, signal) => {
    seen.push({ signal, abortedAtStart: signal.aborted });
    if (seen.length === 1) return new Promise(() => {}); // never answers: the deadline ends it
    return answer('id' in message ? message.id : null);
  });
  const first = await callWithDeadline(transport, request('a'), { ...options, timeoutMs: 30 });
  assert.equal(first.kind, 'failed');
  assert.match(first.kind === 'failed' ? first.reason : '', /^timeout/);
  assert.equal(seen[0]?.signal.aborted, true);
  const second = await callWithDeadline(transport, request('b'), options);
  assert.equal(second.kind, 'response');
  assert.equal(seen[1]?.abortedAtStart, false);
  assert.notEqual(seen[1]?.signal, seen[0]?.signal);
});

test('content selection notes whether the view can hold an attachment part', () => {
  const selection = { default: 'body' as const, categories: {} };
  const text = { id: 'p1', kind: 'text', mediaType: 'text/plain', selection: 'body', text: 'hi' };
  const image = { id: 'p2', kind: 'attachment', mediaType: 'image/png', selection: 'body' };
  const base = { id: 'e1', type: 'user.message.inbound', source: 'urn:x', time: '2026-01-01T00:00:00Z' };

  const plain = selectContentNoting({ ...base, prompt: [text] }, selection, false);
  assert.equal(plain.attachments, false);
  assert.deepEqual(plain.view, { ...base, prompt: [text] });

  assert.equal(selectContentNoting({ ...base, prompt: [text, image] }, selection, false).attachments, true);
  // Under a metadata selection the attachment is still there (as a descriptor).
  const metadata = { default: 'metadata' as const, categories: {} };
  assert.equal(selectContentNoting({ ...base, prompt: [image] }, metadata, false).attachments, true);
  // Omitted everywhere: nothing can reach the backend, so nothing needs publishing.
  const omit = { default: 'omit' as const, categories: {} };
  const omitted = selectContentNoting({ ...base, prompt: [image] }, omit, false);
  assert.deepEqual(omitted.view.prompt, []);
  assert.equal(omitted.attachments, false);
  // An attachment-shaped object inside tool input is arguments, not content.
  const tool = { name: 'Read', input: { file: image } };
  assert.equal(selectContentNoting({ ...base, tool }, selection, false).attachments, false);
});

test('an answer a transport hands over inside the abort counts at the deadline, never after an interruption', async () => {
  // Like the stdio binding holding back a stray answer: nothing until the signal aborts, then the
  // held answer at once, inside the abort.
  const holding = {
    request: (message: JsonRpcRequest, signal: AbortSignal) =>
      new Promise<unknown>((resolve) => {
        signal.addEventListener('abort', () => resolve(answer(`${String(message.id)}-held`)), { once: true });
      }),
    notify: async () => {},
    close: async () => {},
  };
  const atDeadline = await callWithDeadline(holding, request('d'), { ...options, timeoutMs: 20 });
  assert.equal(atDeadline.kind, 'response');
  assert.deepEqual(atDeadline.kind === 'response' && atDeadline.response, answer('d-held'));
  const interrupt = new AbortController();
  setTimeout(() => interrupt.abort(), 20);
  const interrupted = await callWithDeadline(holding, request('i'), {
    ...options,
    interrupt: interrupt.signal,
  });
  assert.equal(interrupted.kind, 'interrupted');
});

test('deadlines share one clock: calls in flight together each end at their own deadline, shortest first', async () => {
  const hang = memoryTransport(() => new Promise(() => {}));
  const ended: string[] = [];
  const call = (id: string, timeoutMs: number) =>
    callWithDeadline(hang, request(id), { ...options, timeoutMs }).then((result) => {
      ended.push(id);
      return result;
    });
  // The longest is started first, so the clock must re-arm for the shorter ones.
  const results = await Promise.all([call('long', 240), call('mid', 120), call('short', 40)]);
  assert.deepEqual(ended, ['short', 'mid', 'long']);
  assert.deepEqual(
    results.map((r) => (r.kind === 'failed' ? r.reason : r.kind)),
    [
      'timeout: no answer within 240 ms',
      'timeout: no answer within 120 ms',
      'timeout: no answer within 40 ms',
    ],
  );
});

test('a deadline that expires while another call is in flight leaves that call its own deadline', async () => {
  let answerLate: ((value: unknown) => void) | undefined;
  const transport = memoryTransport((message) => {
    if ('id' in message && message.id === 'slow') return new Promise((resolve) => (answerLate = resolve));
    return new Promise(() => {});
  });
  const slow = callWithDeadline(transport, request('slow'), { ...options, timeoutMs: 5000 });
  const lost = await callWithDeadline(transport, request('lost'), { ...options, timeoutMs: 30 });
  assert.equal(lost.kind, 'failed');
  answerLate?.(answer('slow'));
  assert.equal((await slow).kind, 'response', 'the longer call was not ended with the shorter one');
});

test('a finished call leaves no timer holding the process open', () => {
  // A child runs one call with a one-hour deadline that is answered at once; it must exit on its
  // own. (If the deadline's timer stayed referenced, it would still be running when killed.)
  const module = new URL('../../src/ahp/harness/call.js', import.meta.url).href;
  const memory = new URL('../../src/ahp/transports/memory.js', import.meta.url).href;
  const script = [
    `const { callWithDeadline } = await import(${JSON.stringify(module)});`,
    `const { memoryTransport } = await import(${JSON.stringify(memory)});`,
    "const t = memoryTransport((m) => ({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: 'draft', effects: [] } }));",
    "const r = await callWithDeadline(t, { jsonrpc: '2.0', id: 'a', method: 'hooks/intercept', params: {} }, { timeoutMs: 3600000, maxAttempts: 1, retryDelayMs: 0 });",
    'process.stdout.write(r.kind);',
  ].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(run.signal, null, 'the child exited by itself');
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, 'response');
});

test('deadlines found expired together by a late tick end in the order they were due', async () => {
  const hang = memoryTransport(() => new Promise(() => {}));
  const ended: string[] = [];
  const calls = [
    ['long', 60],
    ['mid', 40],
    ['short', 20],
  ].map(([id, timeoutMs]) =>
    callWithDeadline(hang, request(id as string), { ...options, timeoutMs: timeoutMs as number }).then(() =>
      ended.push(id as string),
    ),
  );
  // Hold the event loop past every deadline, so one tick finds all three expired.
  const until = performance.now() + 100;
  while (performance.now() < until) {}
  await Promise.all(calls);
  assert.deepEqual(ended, ['short', 'mid', 'long']);
});
