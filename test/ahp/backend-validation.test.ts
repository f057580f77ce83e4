/**
 * The backend kit validates everything it receives before a handler sees it, and every answer
 * before it is sent. Oracles: the official fixture corpus (`aggregateExpectedValid`, else
 * `expectedValid`, of every intercept request and observe notification in the manifest) and the
 * official intercept-response schema (read with ajv) for what a handler may answer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBackend, type Effect } from '../../src/ahp/backend/kit.js';
import {
  type FixtureCase,
  fixtureCases,
  fixturePresent,
  fixtureText,
  officialValid,
} from './messages-oracle.js';

type Json = Record<string, unknown>;
type Rpc = {
  id?: unknown;
  result?: Json;
  error?: { code: number; message: string; data?: { issues?: Json[] } };
};

/** The first message of a fixture, or undefined when its bytes are not one JSON value per line. */
function messageOf(c: FixtureCase): Json | undefined {
  const text = c.binding === 'stdio-jsonl' ? (fixtureText(c).split('\n')[0] ?? '') : fixtureText(c);
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

const verdict = (c: FixtureCase) => c.aggregateExpectedValid ?? c.expectedValid;
const cases = fixtureCases()
  .filter(fixturePresent)
  .map((c) => ({ c, message: messageOf(c) }))
  .filter((x): x is { c: FixtureCase; message: Json } => x.message !== undefined);

describe('backend kit: every fixture request and notification, as the corpus judges it', () => {
  const requests = cases.filter(({ message }) => message.method === 'hooks/intercept');
  const notifications = cases.filter(({ message }) => message.method === 'hooks/observe');

  test('the corpus holds both valid and invalid intercept requests and observe notifications', () => {
    for (const group of [requests, notifications]) {
      assert.ok(group.some(({ c }) => verdict(c)));
      assert.ok(group.some(({ c }) => !verdict(c)));
    }
  });

  for (const { c, message } of requests) {
    test(`${c.id}: ${verdict(c) ? 'reaches the handler' : 'refused before the handler'}`, async () => {
      let calls = 0;
      const kit = createBackend({
        intercept: () => {
          calls++;
          return [];
        },
      });
      const answer = (await kit.handleMessage(message)) as Rpc;
      if (verdict(c)) {
        assert.equal(calls, 1);
        assert.deepEqual(answer.result, { protocolVersion: 'draft', effects: [] });
      } else {
        assert.equal(calls, 0, 'the handler never sees an invalid request');
        assert.ok(answer.error, JSON.stringify(answer));
        if (answer.error.code === -32602) {
          const issues = answer.error.data?.issues ?? [];
          assert.ok(
            issues.length > 0 &&
              issues.every((i) => typeof i.pointer === 'string' && typeof i.rule === 'string'),
          );
        }
      }
    });
  }

  for (const { c, message } of notifications) {
    test(`${c.id}: ${verdict(c) ? 'observed' : 'dropped unobserved'}, never answered`, async () => {
      const seen: unknown[] = [];
      const kit = createBackend({ observe: (event) => void seen.push(event) });
      assert.equal(await kit.handleMessage(message), undefined);
      assert.deepEqual(seen, verdict(c) ? [(message.params as Json).event] : []);
    });
  }
});

describe('backend kit: a handler answer is checked before it is sent', () => {
  const request = cases.find(({ c, message }) => message.method === 'hooks/intercept' && verdict(c))?.message;

  test('effects the official schema refuses become -32004 naming the pointer; valid ones go out', async () => {
    assert.ok(request);
    const capabilities = (request.params as Json).capabilities as { effects: string[] };
    assert.ok(capabilities.effects.includes('deny'));
    const reply = (effects: Effect[]) => ({
      jsonrpc: '2.0',
      id: request.id,
      result: { protocolVersion: 'draft', effects },
    });
    const attempts: Effect[][] = [
      [{ type: 'deny', reason: 'no' }],
      [{ type: 'deny' }],
      [{ type: 'deny', reason: '' }],
      [{ type: 'deny', reason: 'no', extra: true }],
    ];
    let refused = 0;
    for (const effects of attempts) {
      const answer = (await createBackend({ intercept: () => effects }).handleMessage(request)) as Rpc;
      if (officialValid('intercept-response.schema.json', reply(effects))) {
        assert.deepEqual(answer, reply(effects), JSON.stringify(effects));
      } else {
        refused++;
        assert.equal(answer.error?.code, -32004, JSON.stringify(effects));
        assert.ok((answer.error?.data?.issues ?? []).length > 0);
      }
    }
    assert.ok(refused >= 2, 'the official schema refuses some of these answers');
  });
});
