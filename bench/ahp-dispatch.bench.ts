/**
 * Dispatcher overhead per intercept with an in-process backend: one `tool.before` event through
 * the full dispatcher (matching, content selection, request building, deadline, JSON round trip,
 * response validation, atomic staging, settlement) against the floor of calling the same backend
 * handler directly with `JSON.parse(JSON.stringify(request))`, both measured in this run.
 */
import type { InterceptCapabilities } from '../src/ahp/harness/compose.js';
import { Dispatcher } from '../src/ahp/harness/dispatcher.js';
import { memoryTransport } from '../src/ahp/transports/memory.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../src/ahp/transports/transport.js';
import type { CanonicalEvent } from '../src/evidence/record/record.js';
import { interceptSubscription } from './ahp-fixtures.js';
import { type BenchModule, type BenchResult, seconds } from './harness.js';

const N = 20_000;

const capabilities: InterceptCapabilities = {
  effects: ['deny', 'allow', 'ask', 'modify', 'message'],
  modify: { input: { replace: true, merge: true } },
};

function event(i: number): CanonicalEvent {
  return {
    id: `evt-${i}`,
    source: 'urn:tally:bench',
    type: 'tool.before',
    time: '2026-11-30T12:00:00Z',
    session: { id: 'ses_bench' },
    call: { id: `call-${i}` },
    path: 'native',
    tool: { origin: 'native', name: 'Bash', kind: 'shell', input: { command: `git status --short # ${i}` } },
  };
}

/** The backend: allows and says one message. */
function handler(message: JsonRpcRequest | JsonRpcNotification): unknown {
  if (!('id' in message)) return undefined;
  return {
    jsonrpc: '2.0',
    id: message.id,
    result: { protocolVersion: 'draft', effects: [{ type: 'allow' }, { type: 'message', text: 'ok' }] },
  };
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

const bench: BenchModule = {
  title: 'AHP dispatcher overhead (in-process backend)',
  async run(): Promise<BenchResult[]> {
    const dispatcher = new Dispatcher({
      registration: {
        protocolVersion: 'draft',
        hooks: [
          {
            index: 0,
            id: 'org.tally.bench',
            transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
            subscriptions: [interceptSubscription()],
          },
        ],
      },
      transportFactory: () => memoryTransport(handler),
    });
    const requests = Array.from({ length: N }, (_, i) => ({
      jsonrpc: '2.0' as const,
      id: `evt-${i}`,
      method: 'hooks/intercept',
      params: { protocolVersion: 'draft', event: event(i), capabilities },
    }));
    const events = Array.from({ length: N }, (_, i) => event(i));

    const direct = async () => {
      let sink = 0;
      for (const request of requests) {
        const answer = handler(JSON.parse(JSON.stringify(request)) as JsonRpcRequest) as { id: string };
        sink += answer.id.length;
        await Promise.resolve();
      }
      return sink;
    };
    const dispatched = async () => {
      for (const e of events) {
        const outcome = await dispatcher.dispatch({ event: e, capabilities });
        if (outcome.decision !== 'allow') throw new Error('unexpected decision');
      }
    };

    // Warm both, then alternate and keep the best of three of each.
    await direct();
    await dispatched();
    let base = Number.POSITIVE_INFINITY;
    let full = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) {
      base = Math.min(base, await seconds(direct));
      full = Math.min(full, await seconds(dispatched));
    }
    await dispatcher.close();
    const perBase = (base / N) * 1e6;
    const perFull = (full / N) * 1e6;
    return [
      {
        name: 'dispatch one intercept, in-process backend',
        measured: `${perFull.toFixed(1)} us/event (${fmt(N / full)} events/s)`,
        baseline: `direct handler + JSON copy ${perBase.toFixed(2)} us/event`,
        ratio: perBase / perFull,
        target: 'report only (overhead = 1/ratio)',
      },
    ];
  },
};

export default bench;
