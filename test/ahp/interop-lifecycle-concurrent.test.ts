/**
 * Lifecycle rows about correlation, replayed through the real dispatcher over real transports:
 * - stdio `*-before-live` rows: while a request is held, the backend writes a line with another
 *   id (an old answer, an unknown id) before the real answer. A persistent stdio backend's answers
 *   are correlated by id, so the stray line is ignored and the real answer is taken. The backend
 *   is a real child process playing the row (test/ahp/backends/fault-backend.ts `lifecycle`).
 * - HTTP rows with two boundaries pending on one backend at once: a barrier server on 127.0.0.1
 *   holds every intercept until the step list releases it, so the order of answers is the row's,
 *   not the scheduler's. `send` starts a dispatch, `wait` waits for the server's receipt,
 *   `release` lets the held answer go, `cancel` interrupts the boundary, `receive`/`accept` wait
 *   for the boundary to settle (Tally validates and stages an answer in the tick it arrives).
 * Oracle: each row's `expected` (published, cancelled, states).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { InterceptCapabilities, InterceptState } from '../../src/ahp/harness/compose.js';
import { Dispatcher, type DispatchOutcome } from '../../src/ahp/harness/dispatcher.js';
import type { Backend, Registration } from '../../src/ahp/registration/types.js';
import { createTransport } from '../../src/ahp/transports/index.js';
import type { CanonicalEvent } from '../../src/core/event.js';
import { INTEROP, readInterop } from './scenario-replay.js';
import { interceptRegistration, options, recordingLogger, stdioBackend } from './transport-helpers.js';

type Json = Record<string, unknown>;
interface Request {
  id: string;
  params: { event: CanonicalEvent; capabilities: InterceptCapabilities; state?: InterceptState };
}
interface Step {
  op: string;
  key?: string;
  slot?: string;
  count?: number;
  response?: { id: unknown };
}
interface Row {
  id: string;
  requests: Record<string, Request>;
  responses: Record<string, unknown>;
  steps: Step[];
  expected: { published: string[]; cancelled: string[]; ignored: string[]; states: Record<string, Json> };
  transports?: string[];
}

const LIFECYCLE = fileURLToPath(new URL('lifecycle-scenarios.json', INTEROP));
const rows = readInterop<{ scenarios: Row[] }>('lifecycle-scenarios.json').scenarios;
const row = (id: string) => {
  const found = rows.find((r) => r.id === id);
  assert.ok(found, `row ${id} is in the file`);
  return found;
};

function registration(backend: Backend): Registration {
  return interceptRegistration(backend, 'fail-open', 10_000);
}

function dispatchOf(dispatcher: Dispatcher, request: Request, signal?: AbortSignal) {
  const { event, capabilities, state } = request.params;
  return dispatcher.dispatch({
    event,
    capabilities,
    ...(state ? { state } : {}),
    ...(signal ? { signal } : {}),
  });
}

/** Published boundaries carry exactly the row's expected state; every other one was cancelled. */
function checkOutcomes(r: Row, outcomes: Map<string, DispatchOutcome>) {
  const published = [...outcomes]
    .filter(([, o]) => o.subscriptions[0]?.status === 'accepted' && !o.interrupted)
    .map(([id]) => id);
  const cancelled = [...outcomes].filter(([, o]) => o.interrupted).map(([id]) => id);
  assert.deepStrictEqual(published.sort(), [...r.expected.published].sort(), 'published');
  assert.deepStrictEqual(cancelled.sort(), [...r.expected.cancelled].sort(), 'cancelled');
  for (const id of published) {
    const outcome = outcomes.get(id) as unknown as Json;
    for (const [k, v] of Object.entries(r.expected.states[id] ?? {}))
      assert.deepStrictEqual(outcome[k], v, `${id} ${k}`);
  }
}

describe('interop lifecycle rows over stdio persistent: stray lines before the live answer', () => {
  for (const id of ['stdio-unknown-before-live', 'stdio-unsolicited-old-before-live']) {
    test(id, async () => {
      const r = row(id);
      assert.deepStrictEqual(r.transports, ['stdio']);
      const { logger, lines } = recordingLogger();
      const dispatcher = new Dispatcher({
        registration: registration(stdioBackend('lifecycle', [LIFECYCLE, id])),
        transportFactory: (b) => createTransport(b, options({ logger })),
      });
      const outcomes = new Map<string, DispatchOutcome>();
      try {
        // One boundary at a time, in the row's send order (one request in flight per backend).
        for (const step of r.steps.filter((s) => s.op === 'send')) {
          const request = r.requests[step.key as string] as Request;
          outcomes.set(request.id, await dispatchOf(dispatcher, request));
        }
      } finally {
        await dispatcher.close();
      }
      checkOutcomes(r, outcomes);
      // Every emitted stray line was seen and ignored, by id; one process served the whole row.
      const emitted = r.steps.filter((s) => s.op === 'emit').map((s) => s.response?.id);
      const ignored = lines
        .filter((l) => /answers nothing in flight/.test(l.message))
        .map((l) => l.fields?.received);
      assert.deepStrictEqual(ignored, emitted);
      assert.deepStrictEqual(
        r.expected.ignored,
        emitted.map((e) => `unsolicited:${String(e)}`),
      );
      assert.equal(lines.filter((l) => l.message === 'backend started').length, 1);
    });
  }
});

/** An HTTP backend that holds every intercept until the test releases its id (sticky). */
class BarrierServer {
  private readonly receipts = new Map<string, number>();
  private readonly waiters: (() => void)[] = [];
  private readonly held = new Map<string, (() => void)[]>();
  private readonly released = new Set<string>();
  readonly server: http.Server;

  constructor(private readonly responses: Map<string, unknown>) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown }).id);
        this.receipts.set(id, (this.receipts.get(id) ?? 0) + 1);
        for (const wake of this.waiters.splice(0)) wake();
        const reply = () => {
          const body = JSON.stringify(this.responses.get(id));
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          });
          res.end(body);
        };
        if (this.released.has(id)) reply();
        else this.held.set(id, [...(this.held.get(id) ?? []), reply]);
      });
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  async wait(id: string, count: number): Promise<void> {
    while ((this.receipts.get(id) ?? 0) < count) await new Promise<void>((wake) => this.waiters.push(wake));
  }

  release(id: string): void {
    this.released.add(id);
    for (const reply of this.held.get(id) ?? []) reply();
    this.held.delete(id);
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

describe('interop lifecycle rows over HTTP: two boundaries pending at once (barrier server)', () => {
  for (const id of [
    'request-specific-acceptance',
    'two-staged-reverse-acceptance',
    'late-old-while-next-pending',
  ]) {
    test(id, async () => {
      const r = row(id);
      const idOf = (key: string) => (r.requests[key] as Request).id;
      const barrier = new BarrierServer(
        new Map(Object.keys(r.requests).map((k) => [idOf(k), r.responses[k]])),
      );
      const url = await barrier.listen();
      const backend: Backend = {
        index: 0,
        id: 'org.tally.barrier',
        transport: { kind: 'http', url },
        subscriptions: [],
      };
      const dispatcher = new Dispatcher({
        registration: registration(backend),
        transportFactory: (b) => createTransport(b, options()),
      });
      const pending = new Map<string, Promise<DispatchOutcome>>();
      const interrupts = new Map<string, AbortController>();
      const outcomes = new Map<string, DispatchOutcome>();
      const settled = async (key: string) => {
        const outcome = await pending.get(key);
        if (outcome) outcomes.set(idOf(key), outcome);
      };
      try {
        for (const step of r.steps) {
          const key = step.key ?? step.slot ?? '';
          switch (step.op) {
            case 'send': {
              const interrupt = new AbortController();
              interrupts.set(key, interrupt);
              pending.set(key, dispatchOf(dispatcher, r.requests[key] as Request, interrupt.signal));
              break;
            }
            case 'wait':
              await barrier.wait(idOf(key), step.count ?? 1);
              break;
            case 'release':
              barrier.release(idOf(key));
              break;
            case 'cancel':
              interrupts.get(key)?.abort();
              await settled(key);
              break;
            case 'receive':
              await settled(key);
              break;
            case 'accept':
            case 'failOpen':
              // Acceptance happens as the answer arrives; a key not yet answered is accepted later.
              break;
            default:
              assert.fail(`step ${step.op} is not part of these rows`);
          }
        }
        for (const key of pending.keys()) await settled(key);
      } finally {
        await dispatcher.close();
        barrier.close();
      }
      checkOutcomes(r, outcomes);
      // A cancelled boundary applied nothing of the answer that arrived after the cancellation.
      for (const cancelled of r.expected.cancelled) {
        const outcome = outcomes.get(cancelled);
        const request = Object.values(r.requests).find((q) => q.id === cancelled) as Request;
        assert.equal(outcome?.subscriptions[0]?.status, 'interrupted');
        assert.deepStrictEqual(outcome?.input, (request.params.event.tool as Json).input);
        assert.deepStrictEqual(outcome?.messages, []);
      }
    });
  }
});
