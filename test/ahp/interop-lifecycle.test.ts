/**
 * Lifecycle rows beyond the single-boundary ones replayed in interop.test.ts:
 * - `interrupt-after-publication`: an interruption that arrives after the interceptor's response
 *   was accepted changes nothing; the settled state is published and observed.
 * - rows that contradict the hash-verified schemas, where Tally follows the schemas: the oracle
 *   here is the official schema itself (ajv), which must reject the same bytes Tally rejects.
 *   `ask-boundary-observed` answers `{type:"ask", reason}` although the `ask` effect is closed
 *   (`{type}` only); the upload rows put text parts behind `body` references, which the
 *   content-item schema forbids (text is always inline), and confirm uploads with 204 and
 *   client-chosen refs, where the upload binding requires a 201 receipt with a receiver ref.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InterceptCapabilities, InterceptState } from '../../src/ahp/harness/compose.js';
import { Dispatcher } from '../../src/ahp/harness/dispatcher.js';
import type { Registration } from '../../src/ahp/registration/types.js';
import { memoryTransport } from '../../src/ahp/transports/memory.js';
import type { CanonicalEvent } from '../../src/core/event.js';
import { officialValid } from './messages-oracle.js';
import { readInterop } from './scenario-replay.js';

type Json = Record<string, unknown>;
interface Row {
  id: string;
  requests: Record<
    string,
    { params: { event: CanonicalEvent; capabilities: InterceptCapabilities; state?: InterceptState } }
  >;
  responses: Record<string, unknown>;
  steps: { op: string; subscription?: string }[];
  expected: {
    published: string[];
    states: Record<string, Json>;
    observations: { eventId: string; subscription: string; input: unknown }[];
  };
}

const rows = readInterop<{ scenarios: Row[] }>('lifecycle-scenarios.json').scenarios;
const row = (id: string) => {
  const found = rows.find((r) => r.id === id);
  assert.ok(found, `row ${id} is in the file`);
  return found;
};

/** One fail-open interceptor `a`, then one observer per `observe` step, content as the step names. */
function registration(r: Row): Registration {
  const observers = r.steps.filter((s) => s.op === 'observe').map((s) => String(s.subscription));
  return {
    protocolVersion: 'draft',
    hooks: [
      {
        index: 0,
        id: 'org.tally.a',
        transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
        subscriptions: [
          {
            index: 0,
            id: 'a',
            events: ['tool.before'],
            mode: 'intercept',
            timeoutMs: 10_000,
            failurePolicy: 'fail-open',
            content: { default: 'body', categories: {} },
            includeNative: false,
          },
        ],
      },
      {
        index: 1,
        id: 'org.tally.observer',
        transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
        subscriptions: observers.map((label, index) => ({
          index,
          id: label,
          events: ['tool.before'],
          mode: 'observe' as const,
          content: {
            default: label === 'metadata' ? ('metadata' as const) : ('body' as const),
            categories: {},
          },
          includeNative: false,
        })),
      },
    ],
  };
}

async function replay(r: Row, onObserve?: () => void) {
  const observed: { eventId: string; subscription: string; input: unknown }[] = [];
  const labels = r.steps.filter((s) => s.op === 'observe').map((s) => String(s.subscription));
  const interrupt = new AbortController();
  const dispatcher = new Dispatcher({
    registration: registration(r),
    transportFactory: (backend) =>
      memoryTransport((message) => {
        const event = (message.params as { event: CanonicalEvent }).event;
        if (backend.id === 'org.tally.observer') {
          onObserve?.call(interrupt);
          observed.push({
            eventId: event.id,
            subscription: labels[observed.length] ?? '',
            input: (event.tool as Json).input,
          });
          return undefined;
        }
        return r.responses.a;
      }),
  });
  const { event, capabilities, state } = (r.requests.a as Row['requests'][string]).params;
  try {
    const outcome = await dispatcher.dispatch({
      event,
      capabilities,
      ...(state ? { state } : {}),
      signal: interrupt.signal,
    });
    return { outcome, observed, interrupt };
  } finally {
    await dispatcher.close();
  }
}

describe('interop lifecycle-scenarios.json (more rows)', () => {
  test('interrupt-after-publication: a late interruption changes nothing that was published', async () => {
    const r = row('interrupt-after-publication');
    const { outcome, observed } = await replay(r, function (this: AbortController) {
      this.abort(); // the interceptor's response is accepted and settled by now
    });
    const key = r.requests.a?.params.event.id as string;
    assert.ok(r.expected.published.includes(key));
    for (const [k, v] of Object.entries(r.expected.states[key] ?? {}))
      assert.deepStrictEqual((outcome as unknown as Json)[k], v, k);
    assert.equal(outcome.interrupted, undefined);
    assert.deepStrictEqual(observed, r.expected.observations);
  });

  test('ask-boundary-observed: the official schema refuses the scripted ask, and so does Tally', async () => {
    const r = row('ask-boundary-observed');
    const response = r.responses.a as { result: { effects: Json[] } };
    assert.deepStrictEqual(response.result.effects, [{ type: 'ask', reason: 'confirm' }]);
    assert.equal(officialValid('intercept-response.schema.json', response), false, 'ask is {type} only');
    const { outcome, observed } = await replay(r);
    assert.equal(outcome.subscriptions[0]?.status, 'rejected');
    // Rejected whole and settled fail-open: nothing of the response applies.
    assert.equal(outcome.decision, 'allow');
    assert.deepStrictEqual(outcome.input, { value: 'original' });
    // The boundary is still observed, with the effective (unchanged) input, as the row expects.
    assert.deepStrictEqual(observed, r.expected.observations);
  });

  test('upload rows: the official schemas refuse the content each row scripts behind a body reference', () => {
    const uploadRows = rows.filter((r) => r.steps.some((s) => s.op === 'upload'));
    assert.equal(uploadRows.length, 6);
    // The sixth, upload-integrity-rejection, only uploads (no event carries its refs): it scripts a
    // receiver's 400/403 answers, which the uploader's tests cover from the sending side.
    const sending = uploadRows.filter((r) => r.id !== 'upload-integrity-rejection');
    assert.equal(sending.length, 5);
    const textByRef = (items: unknown) =>
      Array.isArray(items) &&
      items.some((i) => (i as Json).kind !== 'attachment' && (i as Json).body !== undefined);
    for (const r of sending) {
      let scripted = 0;
      // A request whose own event carries text behind a reference.
      for (const request of Object.values(r.requests)) {
        if (!textByRef((request.params.event as Json).items)) continue;
        assert.equal(officialValid('intercept-request.schema.json', request), false, `${r.id}: request`);
        scripted++;
      }
      // An observation whose event carries the uploaded content as items behind references: the
      // request's event with those items, as an observer would be sent it.
      for (const step of r.steps) {
        const items = (step as { items?: unknown }).items;
        if (step.op !== 'observe' || !textByRef(items)) continue;
        const key = (step as { key?: string }).key ?? '';
        const event = { ...(r.requests[key]?.params.event as Json), items };
        const notification = {
          jsonrpc: '2.0',
          method: 'hooks/observe',
          params: { protocolVersion: 'draft', event },
        };
        assert.equal(
          officialValid('observe-notification.schema.json', notification),
          false,
          `${r.id}: observe`,
        );
        scripted++;
      }
      assert.ok(scripted > 0, `${r.id} scripts content behind a body reference`);
    }
  });
});
