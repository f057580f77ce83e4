/**
 * The dispatcher's edit engine and the message validator must agree on every contextual fixture
 * (`editContext` in the official manifest): each case's response is scripted into a real dispatch
 * and must be accepted exactly when `contextualExpectedValid` says so. An accepted edit must land
 * where the spec's target mapping puts it, with the spec's edit semantics (AHP-EDIT-001): a list
 * replace substitutes, a list merge appends in order, an object merge is shallow. At
 * `user.elicitation.result` the edited object is the MCP answer, the `content` member of the
 * serialized ElicitResult, which is what the fixtures' `current.content` holds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InterceptCapabilities } from '../../src/ahp/harness/compose.js';
import { dispatch } from '../../src/ahp/harness/dispatcher.js';
import type { Registration } from '../../src/ahp/registration/types.js';
import { memoryTransport } from '../../src/ahp/transports/memory.js';
import type { CanonicalEvent } from '../../src/evidence/record/record.js';
import {
  CONTEXT_TARGETS,
  contextualRequest,
  type FixtureCase,
  fixtureCases,
  fixturePresent,
  fixtureText,
} from './messages-oracle.js';

type Json = Record<string, unknown>;

function registration(type: string): Registration {
  return {
    protocolVersion: 'draft',
    hooks: [
      {
        index: 0,
        id: 'org.tally.test.contextual',
        transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
        subscriptions: [
          {
            index: 0,
            events: [type],
            mode: 'intercept',
            timeoutMs: 5000,
            failurePolicy: 'fail-open',
            content: { default: 'body', categories: {} },
            includeNative: false,
          },
        ],
      },
    ],
  };
}

/** Where the spec's target mapping puts each contextual target, read from an event. */
function targetValue(event: Json, type: string): unknown {
  if (type === 'tool.after') return event.items;
  if (type === 'user.message.outbound') return (event.message as Json).messages;
  const result = (event.elicitation as Json).result as { text: string };
  return (JSON.parse(result.text) as Json).content;
}

/** The spec's edit semantics, computed here from the case alone. */
function expectedTarget(current: unknown, effect: Json): unknown {
  if (effect.operation === 'replace') return effect.value;
  if (Array.isArray(current)) return [...current, ...(effect.value as unknown[])];
  return { ...(current as Json), ...(effect.value as Json) };
}

describe('contextual fixtures through the dispatcher', () => {
  for (const c of fixtureCases().filter((x) => x.editContext && fixturePresent(x))) {
    test(c.id, async () => {
      const ctx = c.editContext as NonNullable<FixtureCase['editContext']>;
      const response = JSON.parse(fixtureText(c)) as Json;
      const request = contextualRequest(ctx, String(response.id));
      const event = request.params.event as unknown as CanonicalEvent;
      const before = structuredClone(event);
      const outcome = await dispatch({
        registration: registration(ctx.event),
        transportFactory: () => memoryTransport(() => response),
        event,
        capabilities: request.params.capabilities as InterceptCapabilities,
      });
      const report = outcome.subscriptions[0];
      assert.equal(report?.status, c.contextualExpectedValid ? 'accepted' : 'rejected', report?.reason);
      const effective = outcome.event as unknown as Json;
      if (!c.contextualExpectedValid) {
        assert.deepStrictEqual(effective, before, 'a rejected response changes nothing');
        return;
      }
      const effects = (response.result as { effects: Json[] }).effects;
      let expected = ctx.current[CONTEXT_TARGETS[ctx.event] as string];
      for (const effect of effects) expected = expectedTarget(expected, effect);
      assert.deepStrictEqual(targetValue(effective, ctx.event), expected);
      if (ctx.event === 'user.elicitation.result') {
        const result = (effective.elicitation as Json).result as { text: string };
        assert.equal((JSON.parse(result.text) as Json).action, ctx.action, 'the ElicitResult envelope stays');
      }
    });
  }
});
