/**
 * The message validator against every message case of the official fixture manifest: the case's
 * own verdict (`expectedValid`), the WireMessage union verdict (`aggregateExpectedValid`) and the
 * boundary-context verdict (`contextualExpectedValid`). The official schemas (ajv) are checked
 * against the same manifest, and whenever they reject a fixture Tally must reject it too.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  FramingError,
  type MessageKind,
  parseStdioLine,
  validateEvent,
  validateInterceptResponse,
  validateMessage,
} from '../../src/ahp/messages/index.js';
import {
  contextualRequest,
  type FixtureCase,
  fixtureCases,
  fixturePresent,
  fixtureText,
  officialAggregateValid,
  officialCaseValid,
  officialValid,
} from './messages-oracle.js';

type Json = Record<string, unknown>;

const CASES = fixtureCases();
const PRESENT = CASES.filter(fixturePresent);

/**
 * Cases whose invalidity the official schemas cannot express; the manifest still marks them
 * invalid and the spec says conformance tooling checks them in code (id equal to event id, §2.1).
 */
const BEYOND_SCHEMA = new Set(['http.intercept-request-id-mismatch.invalid']);

/** Stdio fixtures hold one frame per line; the multi-line fixture must fail framing. */
function parseFixture(c: FixtureCase): { message?: unknown; framingError?: unknown } {
  const text = fixtureText(c);
  if (c.binding !== 'stdio-jsonl') return { message: JSON.parse(text) };
  try {
    return { message: parseStdioLine(text) };
  } catch (error) {
    return { framingError: error };
  }
}

/** The message kind a fixture's target schema describes (undefined: infer it, as the union does). */
function kindFor(schema: string): MessageKind | undefined {
  const file = schema.replace(/^schema\/draft\//, '').replace(/\.schema\.json$/, '');
  if (file.startsWith('intercept-') && file.endsWith('-response')) return 'intercept-response';
  const direct: Record<string, MessageKind> = {
    'intercept-request': 'intercept-request',
    'observe-notification': 'observe-notification',
    'capabilities-request': 'capabilities-request',
    'capabilities-response': 'capabilities-response',
  };
  return direct[file];
}

/** Extra constraints of the narrower response schemas, checked on top of the general response. */
function narrowHolds(schema: string, message: unknown): boolean {
  const effects = ((message as Json).result as Json | undefined)?.effects;
  if (schema.endsWith('intercept-no-effect-response.schema.json'))
    return Array.isArray(effects) && effects.length === 0;
  if (schema.endsWith('intercept-deny-response.schema.json')) {
    return Array.isArray(effects) && effects.length === 1 && (effects[0] as Json).type === 'deny';
  }
  return true;
}

function tallyCaseValid(c: FixtureCase, message: unknown): boolean {
  if (validateMessage(message, kindFor(c.schema)).length > 0 || !narrowHolds(c.schema, message)) return false;
  if (!c.eventSchema) return true;
  const event = ((message as Json).params as Json).event as Json;
  const expectedType = c.eventSchema
    .replace(/^schema\/draft\//, '')
    .replace(/\.schema\.json$/, '')
    .replace('-', '.');
  return event.type === expectedType && validateEvent(event).length === 0;
}

describe('official fixture manifest', () => {
  test('the corpus holds the message cases this suite expects', () => {
    assert.equal(CASES.length, 107);
    assert.deepEqual(
      CASES.filter((c) => !fixturePresent(c)).map((c) => c.id),
      ['http.observe-with-id.invalid', 'http.observe-unknown-event.invalid'],
    );
  });

  for (const c of PRESENT) {
    test(c.id, () => {
      const { message, framingError } = parseFixture(c);
      if (framingError !== undefined) {
        assert.ok(framingError instanceof FramingError, 'framing failures are FramingError');
        assert.equal(c.expectedValid, false);
        assert.equal(c.aggregateExpectedValid, false);
        return;
      }
      const own = validateMessage(message, kindFor(c.schema));
      assert.equal(
        tallyCaseValid(c, message),
        c.expectedValid,
        `expectedValid; issues: ${JSON.stringify(own)}`,
      );
      if (c.aggregateExpectedValid !== undefined) {
        assert.equal(
          validateMessage(message).length === 0,
          c.aggregateExpectedValid,
          'aggregateExpectedValid',
        );
      }
      for (const issue of own) {
        assert.match(issue.pointer, /^(?:\/[^/]*)*$/, 'pointers are RFC 6901');
        assert.ok(issue.rule.length > 0 && issue.message.length > 0);
      }
    });
  }
});

describe('official schemas as oracle', () => {
  for (const c of PRESENT) {
    const { message, framingError } = parseFixture(c);
    if (framingError !== undefined) continue;
    test(`${c.id}: the official verdict matches the manifest, and Tally rejects what it rejects`, () => {
      const official = officialCaseValid(c, message);
      const aggregate = officialAggregateValid(message);
      if (BEYOND_SCHEMA.has(c.id)) {
        assert.equal(official, true, 'this case is invalid only by a rule the schema cannot express');
      } else {
        assert.equal(official, c.expectedValid, 'official schema verdict vs expectedValid');
        if (c.aggregateExpectedValid !== undefined) assert.equal(aggregate, c.aggregateExpectedValid);
      }
      if (!official) assert.ok(!tallyCaseValid(c, message), 'official schema rejects, so Tally must');
      if (!aggregate) assert.ok(validateMessage(message).length > 0, 'the union rejects, so Tally must');
    });
  }
});

/** The two manifest cases whose files are absent, rebuilt from their names and the spec (§2.2). */
describe('manifest cases without a file, rebuilt', () => {
  const observe = JSON.parse(
    fixtureText(CASES.find((c) => c.id === 'http.observe-tool-error.valid') as FixtureCase),
  ) as Json;

  test('observe-with-id: a notification that carries an id', () => {
    const message = { ...structuredClone(observe), id: 'evt-1' };
    assert.equal(officialValid('observe-notification.schema.json', message), false);
    const issues = validateMessage(message);
    assert.ok(
      issues.some((i) => i.pointer === '/id' && i.rule === 'rpc.notification-id'),
      JSON.stringify(issues),
    );
  });

  test('observe-unknown-event: a removed event name is unsupported, not ignored', () => {
    const message = structuredClone(observe);
    ((message.params as Json).event as Json).type = 'tool.error';
    assert.equal(officialValid('observe-notification.schema.json', message), false);
    const issues = validateMessage(message);
    assert.ok(
      issues.some((i) => i.pointer === '/params/event/type' && i.rule === 'event.unknown-type'),
      JSON.stringify(issues),
    );
  });
});

describe('contextual verdicts (editContext)', () => {
  for (const c of PRESENT.filter((x) => x.editContext)) {
    test(c.id, () => {
      const response = JSON.parse(fixtureText(c)) as Json;
      const request = contextualRequest(
        c.editContext as NonNullable<FixtureCase['editContext']>,
        String(response.id),
      );
      assert.equal(
        officialValid('intercept-request.schema.json', request),
        true,
        'the rebuilt request is itself valid',
      );
      assert.deepEqual(validateMessage(request), []);
      const issues = validateInterceptResponse(response, request);
      assert.equal(issues.length === 0, c.contextualExpectedValid, JSON.stringify(issues));
    });
  }
});

describe('kind inference and framing', () => {
  test('a message with an unknown method, a batch and a mixed message are rejected', () => {
    assert.equal(
      validateMessage({ jsonrpc: '2.0', id: 1, method: 'hooks/other', params: {} })[0]?.rule,
      'rpc.unknown-method',
    );
    assert.equal(validateMessage([])[0]?.rule, 'type');
    const mixed = { jsonrpc: '2.0', id: 1, method: 'hooks/intercept', params: {}, result: {} };
    assert.equal(validateMessage(mixed)[0]?.rule, 'rpc.ambiguous');
    assert.equal(validateMessage({ jsonrpc: '2.0' })[0]?.rule, 'rpc.not-a-message');
  });

  test('parseStdioLine takes one object per line and names the fault', () => {
    assert.deepEqual(parseStdioLine('{"jsonrpc":"2.0"}\n'), { jsonrpc: '2.0' });
    const fails = (line: string, code: string) =>
      assert.throws(
        () => parseStdioLine(line),
        (e: unknown) => e instanceof FramingError && e.code === code,
      );
    fails('{"a":1}\n{"b":2}\n', 'framing.newline');
    fails('{"a":1}{"b":2}', 'framing.json');
    fails('{"a":1}\r\n', 'framing.newline');
    fails('starting backend...', 'framing.json');
    fails('[{"a":1}]', 'framing.not-object');
    fails('', 'framing.empty');
    fails('{"a":1,"a":2}', 'framing.json');
  });
});
