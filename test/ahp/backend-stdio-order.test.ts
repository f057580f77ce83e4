/**
 * The backend kit's stdio loop when synchronous and asynchronous answers mix. Oracles: the AHP
 * stdio binding (one JSON-RPC object per line; a response carries its request's id; a notification
 * is never answered), the kit's documented contract (lines are answered one at a time in the order
 * read, so an asynchronous answer is never overtaken by a later synchronous one), and the protocol's
 * -32004 for a backend that fails while evaluating. Requests are built from an official interop row.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { createBackend, type Effect } from '../../src/ahp/backend/kit.js';
import { loadScenarioRows } from './scenario-replay.js';

const row = loadScenarioRows().find((r) => r.id === 'deny-blocks')!;
const BASE = row.request as unknown as {
  params: { event: Record<string, unknown> } & Record<string, unknown>;
};

function request(id: string): string {
  const params = { ...BASE.params, event: { ...BASE.params.event, id } };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'hooks/intercept', params });
}

function observe(id: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'hooks/observe',
    params: { protocolVersion: 'draft', event: { ...BASE.params.event, id } },
  });
}

/** Writes `lines` as one chunk, ends input, and returns every output line once the loop resolves. */
async function serve(kit: ReturnType<typeof createBackend>, lines: string[]): Promise<unknown[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (c: Buffer) => chunks.push(c));
  const done = kit.serveStdio(input, output);
  input.end(`${lines.join('\n')}\n`);
  await done;
  const text = Buffer.concat(chunks).toString('utf8');
  assert.ok(text === '' || text.endsWith('\n'), 'every answer is a whole line');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

const ids = (answers: unknown[]) => answers.map((a) => (a as { id: unknown }).id);

describe('backend kit over stdio: order and framing', () => {
  test('asynchronous answers are not overtaken by later synchronous ones', async () => {
    const slow = new Set(['a', 'c']);
    const kit = createBackend({
      intercept: ({ event }): readonly Effect[] | Promise<readonly Effect[]> =>
        slow.has(event.id)
          ? new Promise((resolve) => setTimeout(() => resolve([{ type: 'deny', reason: event.id }]), 20))
          : [],
    });
    const answers = await serve(kit, ['a', 'b', 'c', 'd', 'e'].map(request));
    assert.deepEqual(ids(answers), ['a', 'b', 'c', 'd', 'e']);
    const reasons = answers.map(
      (a) => (a as { result: { effects: { reason?: string }[] } }).result.effects[0]?.reason,
    );
    assert.deepEqual(reasons, ['a', undefined, 'c', undefined, undefined]);
  });

  test('a slow observer delays the answers after it, and is never answered itself', async () => {
    const seen: string[] = [];
    const kit = createBackend({
      intercept: ({ event }) => {
        seen.push(`intercept ${event.id}`);
        return [];
      },
      observe: (event) =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            seen.push(`observe ${String(event.id)}`);
            resolve();
          }, 20),
        ),
    });
    const answers = await serve(kit, [request('x'), observe('o'), request('y')]);
    assert.deepEqual(ids(answers), ['x', 'y']);
    assert.deepEqual(seen, ['intercept x', 'observe o', 'intercept y']);
  });

  test('a handler that throws or returns what JSON cannot carry gets -32004, and the stream goes on', async () => {
    const kit = createBackend({
      intercept: ({ event }) => {
        if (event.id === 'throws') throw new Error('boom');
        if (event.id === 'bigint') return [{ type: 'deny', reason: 'r', extra: 1n }];
        return [];
      },
    });
    const answers = (await serve(kit, ['throws', 'bigint', 'fine'].map(request))) as {
      id: string;
      error?: { code: number };
      result?: unknown;
    }[];
    assert.deepEqual(ids(answers), ['throws', 'bigint', 'fine']);
    assert.equal(answers[0]?.error?.code, -32004);
    assert.equal(answers[1]?.error?.code, -32004);
    assert.ok(answers[2]?.result);
  });

  test('blank lines are skipped and malformed lines answered -32700 in place', async () => {
    const kit = createBackend({ intercept: () => [] });
    const answers = (await serve(kit, [request('p'), '   ', '{"jsonrpc":', request('q')])) as {
      id: unknown;
      error?: { code: number };
    }[];
    assert.deepEqual(ids(answers), ['p', null, 'q']);
    assert.equal(answers[1]?.error?.code, -32700);
  });
});
