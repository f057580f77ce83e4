/**
 * Replays every row of the official interop `scenarios.json` through the real dispatcher against a
 * scripted backend that answers each request with the row's `response`, untouched. Any transport
 * can carry it: pass a function that connects a transport to the scripted backend.
 *
 * Oracles: the rows' `expected` objects and `expectError` flags, the interop verifier contract
 * (no unasserted `result`/`flow`/`injections`/continuation keys), and the official draft schemas
 * (read with ajv) where the scenario file predates them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { InterceptCapabilities, InterceptState } from '../../src/ahp/harness/compose.js';
import { Dispatcher, type DispatchOutcome } from '../../src/ahp/harness/dispatcher.js';
import type { Registration } from '../../src/ahp/registration/types.js';
import type {
  BackendTransport,
  JsonRpcNotification,
  JsonRpcRequest,
} from '../../src/ahp/transports/transport.js';
import type { CanonicalEvent } from '../../src/evidence/record/record.js';

export const SHARED = new URL('../../../../shared/', import.meta.url);
export const INTEROP = new URL('ahp/interop/', SHARED);

type JsonObject = Record<string, unknown>;

export interface ScenarioRow {
  id: string;
  request: {
    id: string;
    params: { event: CanonicalEvent; capabilities: InterceptCapabilities; state?: InterceptState };
  };
  response: unknown;
  tags: string[];
  expected?: JsonObject;
  expectError?: true;
}

export function readInterop<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(file, INTEROP), 'utf8')) as T;
}

export function loadScenarioRows(): ScenarioRow[] {
  return readInterop<{ scenarios: ScenarioRow[] }>('scenarios.json').scenarios;
}

/** The scripted backend: the row's response for the row's event id, untouched. */
export interface ScriptedBackend {
  /** Answers a request; returns undefined for a notification or an unknown id. */
  handle(message: unknown): unknown;
}

export type TransportMaker = (backend: ScriptedBackend) => BackendTransport | Promise<BackendTransport>;

export function scriptedBackend(rows: readonly ScenarioRow[]): ScriptedBackend {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return {
    handle(message) {
      const m = message as { id?: unknown; params?: { event?: { id?: unknown } } };
      if (m.id === undefined) return undefined;
      return byId.get(String(m.params?.event?.id))?.response;
    },
  };
}

/** An ajv instance holding every official draft schema, keyed by its `$id`. */
export function officialSchemas(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const dir = new URL('ahp/schema/draft/', SHARED);
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.schema.json') && file !== 'schema.json') continue;
    ajv.addSchema(JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as object);
  }
  return ajv;
}

const RESPONSE_SCHEMA = 'https://agenthooksprotocol.org/schemas/draft/intercept-response.schema.json';

/**
 * Rows whose scripted response the current official schema judges differently from the older
 * scenario file. The schema is the normative source, so it decides; where that turns a rejection
 * into an acceptance, the outcome below is worked out by hand from the composition rules.
 */
export const SCHEMA_DECIDED: Record<string, JsonObject | 'reject'> = {
  // effect.schema.json: an inject value is a canonical message list; `{text}` is not one.
  'inject-now': 'reject',
  // effect.schema.json: `instruction` is optional on continue. Accepted: the message is published,
  // one continuation is consumed (2 -> 1), and there is no instruction to retain.
  'flow-continue-missing-instruction': {
    decision: 'allow',
    executed: false,
    messages: ['Visible only after acceptance'],
    flow: 'continue',
    continuationInstructions: [],
    continuationRemaining: 1,
  },
};

/** Keys a successful result must not carry unless the row asserts them (interop verifier contract). */
const SEMANTIC_KEYS = [
  'result',
  'flow',
  'injections',
  'continuationInstructions',
  'continuationRemaining',
  'rejected',
];

/** The fixture host's own tool rule: the staged `task` argument must be a positive integer. */
export function fixtureHostCheck(event: CanonicalEvent): string | undefined {
  const input = (event.tool as { input?: unknown } | undefined)?.input as JsonObject | undefined;
  const task = input?.task;
  return typeof task === 'number' && Number.isInteger(task) && task > 0
    ? undefined
    : 'task must be a positive integer';
}

export function interopRegistration(
  failurePolicy: 'fail-open' | 'fail-closed',
  timeoutMs = 10_000,
): Registration {
  return {
    protocolVersion: 'draft',
    hooks: [
      {
        index: 0,
        id: 'org.tally.interop',
        transport: { kind: 'http', url: 'http://127.0.0.1:9/unused' },
        subscriptions: [
          {
            index: 0,
            id: 'interop',
            events: ['*'],
            mode: 'intercept',
            timeoutMs,
            failurePolicy,
            content: { default: 'body', categories: {} },
            includeNative: false,
          },
        ],
      },
    ],
  };
}

/** What applying nothing must leave: the incoming state resolved on the original event. */
function untouchedOutcome(row: ScenarioRow): JsonObject {
  const { event, state, capabilities } = row.request.params;
  const permission = state?.permission ?? 'none';
  const decision = permission === 'deny' ? 'deny' : permission === 'ask' ? 'ask' : 'allow';
  const stopped = state?.flow === 'stop';
  const candidate = state?.candidate ?? null;
  const isTool = event.type === 'tool.before';
  const out: JsonObject = {
    decision,
    executed: isTool && decision === 'allow' && !stopped && candidate === null,
    messages: [],
  };
  if (isTool) out.input = (event.tool as JsonObject).input;
  if (isTool && decision === 'allow' && !stopped && candidate !== null) out.result = candidate.value;
  if (capabilities.flow?.operations.includes('continue')) {
    out.continuationInstructions = [];
    out.continuationRemaining = capabilities.flow.remainingContinuations;
  }
  return out;
}

function checkExpected(outcome: DispatchOutcome, expected: JsonObject): void {
  const actual = outcome as unknown as JsonObject;
  for (const [key, value] of Object.entries(expected)) {
    assert.deepStrictEqual(actual[key], value, `expected.${key}`);
  }
  for (const key of SEMANTIC_KEYS) {
    if (!(key in expected)) {
      const present = actual[key];
      const empty = key === 'injections' && Array.isArray(present) && present.length === 0;
      assert.ok(present === undefined || empty, `unasserted '${key}' must not be reported`);
    }
  }
}

/**
 * Registers one test per scenario row. `makeTransport` connects a transport to the scripted
 * backend; the same transport serves every row (a long-lived dispatcher, as in a session).
 */
/** `timeoutMs` is the subscription deadline, which a row with a stray answer over stdio waits out. */
export function replayScenarios(makeTransport: TransportMaker, label = 'memory', timeoutMs = 10_000): void {
  const rows = loadScenarioRows();
  const ajv = officialSchemas();
  const sent = new Map<string, unknown[]>();
  let transport: BackendTransport;
  let open: Dispatcher;
  let closed: Dispatcher;

  describe(`interop scenarios.json over ${label}`, () => {
    before(async () => {
      const inner = await makeTransport(scriptedBackend(rows));
      transport = {
        request(message: JsonRpcRequest, signal: AbortSignal) {
          const key = String(message.id);
          sent.set(key, [...(sent.get(key) ?? []), structuredClone(message)]);
          return inner.request(message, signal);
        },
        notify: (message: JsonRpcNotification, signal: AbortSignal) => inner.notify(message, signal),
        close: () => inner.close(),
      };
      const shared = { transportFactory: () => transport, hostCheck: fixtureHostCheck };
      open = new Dispatcher({ registration: interopRegistration('fail-open', timeoutMs), ...shared });
      closed = new Dispatcher({ registration: interopRegistration('fail-closed', timeoutMs), ...shared });
    });
    after(async () => {
      await open.close();
      await closed.close();
      await transport.close();
    });

    test('the file holds every row once, each with exactly one of expected / expectError', () => {
      assert.ok(rows.length > 0);
      assert.equal(new Set(rows.map((r) => r.id)).size, rows.length);
      for (const row of rows)
        assert.ok((row.expected === undefined) !== (row.expectError === undefined), row.id);
    });

    for (const row of rows) {
      test(row.id, async () => {
        const { event, capabilities, state } = row.request.params;
        const input = { event, capabilities, ...(state !== undefined ? { state } : {}) };
        const outcome = await open.dispatch(input);
        // The backend received the canonical request exactly, once.
        assert.deepStrictEqual(sent.get(row.id), [row.request]);
        const report = outcome.subscriptions[0];
        assert.equal(outcome.subscriptions.length, 1);

        const schemaValid = ajv.validate(RESPONSE_SCHEMA, row.response);
        const decided = SCHEMA_DECIDED[row.id];
        if (decided !== undefined) {
          assert.equal(
            schemaValid,
            decided !== 'reject',
            'the official schema verdict this row is decided by',
          );
        }
        const expected = decided === undefined ? row.expected : decided === 'reject' ? undefined : decided;

        if (expected !== undefined) {
          assert.equal(report?.status, 'accepted', report?.reason);
          checkExpected(outcome, expected);
          return;
        }
        // Rejected whole after the response arrived (not a transport failure), nothing applied.
        assert.equal(
          report?.status,
          'rejected',
          `must be rejected at validation or staging: ${report?.reason}`,
        );
        checkExpected(outcome, untouchedOutcome(row));
        assert.equal(outcome.permission, state?.permission ?? 'none');
        assert.deepStrictEqual(outcome.event, event);
        // Fail-closed turns the same rejection into a synthetic denial with a generic reason.
        const denied = await closed.dispatch(input);
        assert.equal(denied.subscriptions[0]?.status, 'rejected');
        assert.equal(denied.decision, 'deny');
        assert.equal(denied.executed, false);
        assert.deepStrictEqual(denied.messages, []);
        assert.equal(denied.result, undefined);
        assert.equal(denied.denial?.synthetic, true);
        assert.equal(denied.denial?.reason, 'policy backend unavailable');
      });
    }
  });
}
