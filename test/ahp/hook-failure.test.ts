/**
 * Optional `hook.failure` observations. Oracles: the digest's failure rules (a hook failure may
 * surface as a `hook.failure` observation naming backend, reason, policy and parent event; error
 * detail never carries secrets), REG-002 (only subscriptions that select `hook.failure` get it),
 * and the official observe-notification schema for the wire shape.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dispatch } from '../../src/ahp/harness/dispatcher.js';
import type { Registration, Subscription } from '../../src/ahp/registration/types.js';
import { memoryTransport } from '../../src/ahp/transports/memory.js';
import {
  type JsonRpcNotification,
  type JsonRpcRequest,
  TransportError,
} from '../../src/ahp/transports/transport.js';
import type { CanonicalEvent } from '../../src/core/event.js';
import { officialValid } from './messages-oracle.js';

const event: CanonicalEvent = {
  id: 'evt-hf-1',
  source: 'urn:test:harness',
  type: 'tool.before',
  time: '2026-09-15T12:00:00Z',
  session: { id: 'ses-1' },
  call: { id: 'call-1' },
  path: 'native',
  tool: { origin: 'native', name: 'Bash', input: { command: 'ls' } },
};

const SECRET = 'token-4b1d-do-not-leak';

function sub(index: number, patch: Partial<Subscription>): Subscription {
  return {
    index,
    events: ['tool.before'],
    mode: 'intercept',
    timeoutMs: 2000,
    failurePolicy: 'fail-open',
    content: { default: 'body', categories: {} },
    includeNative: false,
    ...patch,
  };
}

const registration: Registration = {
  protocolVersion: 'draft',
  hooks: [
    {
      index: 0,
      id: 'org.example.broken',
      transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
      subscriptions: [sub(0, {})],
    },
    {
      index: 1,
      id: 'org.example.garbled',
      transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
      subscriptions: [sub(0, { failurePolicy: 'fail-closed' })],
    },
    {
      index: 2,
      id: 'org.example.audit',
      transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
      subscriptions: [
        {
          index: 0,
          events: ['hook.failure'],
          mode: 'observe',
          content: { default: 'body', categories: {} },
          includeNative: false,
        },
      ],
    },
  ],
};

async function run(hookFailures: boolean) {
  const audit: (JsonRpcRequest | JsonRpcNotification)[] = [];
  const outcome = await dispatch({
    registration,
    hookFailures,
    transportFactory: (backend) =>
      memoryTransport((message) => {
        if (backend.id === 'org.example.broken')
          throw new TransportError('transport', `refused with ${SECRET}`);
        if (backend.id === 'org.example.garbled')
          return { jsonrpc: '2.0', id: 'id' in message ? message.id : null, result: {} };
        audit.push(message);
        return undefined;
      }),
    event,
    capabilities: { effects: ['deny'] },
  });
  return { outcome, audit };
}

describe('hook.failure observations', () => {
  test('each failed or rejected call reaches the hook.failure observer, schema-valid and secret-free', async () => {
    const { outcome, audit } = await run(true);
    assert.equal(outcome.decision, 'deny', 'the fail-closed rejection still denies');
    assert.equal(audit.length, 2);
    const failures = audit.map((m) => (m.params as { event: Record<string, unknown> }).event);
    assert.deepEqual(
      failures.map((f) => f.failure),
      [
        { backendId: 'org.example.broken', reason: 'transport', policy: 'fail-open' },
        { backendId: 'org.example.garbled', reason: 'invalid response', policy: 'fail-closed' },
      ],
    );
    for (const [i, message] of audit.entries()) {
      assert.equal(message.method, 'hooks/observe');
      assert.ok(!('id' in message));
      assert.equal(failures[i]?.type, 'hook.failure');
      assert.equal(failures[i]?.parentEventId, event.id);
      assert.ok(officialValid('observe-notification.schema.json', message), JSON.stringify(message));
      assert.ok(!JSON.stringify(message).includes(SECRET));
    }
    assert.notEqual(failures[0]?.id, failures[1]?.id);
    const derived = outcome.subscriptions.filter((s) => s.event === 'hook.failure');
    assert.equal(derived.length, 2);
  });

  test('off by default: nothing reaches the observer, which selects only hook.failure', async () => {
    const { audit } = await run(false);
    assert.equal(audit.length, 0);
  });
});
