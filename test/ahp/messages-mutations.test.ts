/**
 * Mutation tests: every valid official message fixture is mutated one field at a time (dropped,
 * given a wrong type) and the official schema's verdict on the mutant is the oracle. Whatever the
 * schema rejects, Tally must reject with an issue naming the field (or its containing object).
 * Rules the schema cannot express (id correlation, advertised effects) are mutated separately.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseStdioLine, validateInterceptResponse, validateMessage } from '../../src/ahp/messages/index.js';
import {
  fixtureCases,
  fixturePresent,
  fixtureText,
  members,
  mutate,
  officialAggregateValid,
  officialValid,
  SHARED,
} from './messages-oracle.js';

type Json = Record<string, unknown>;

const VALID = fixtureCases().filter((c) => fixturePresent(c) && c.aggregateExpectedValid === true);

function load(id: string): Json {
  const c = VALID.find((x) => x.id === id);
  if (!c) throw new Error(`no valid fixture ${id}`);
  return (c.binding === 'stdio-jsonl' ? parseStdioLine(fixtureText(c)) : JSON.parse(fixtureText(c))) as Json;
}

function wrongTypeFor(value: unknown): unknown {
  if (typeof value === 'string') return 42;
  if (typeof value === 'number') return 'forty-two';
  if (typeof value === 'boolean') return 'true';
  if (Array.isArray(value)) return { not: 'an array' };
  if (value === null) return 7;
  return 'not an object';
}

/** An issue names the mutated field, something inside it, or the object that holds it. */
function named(issues: { pointer: string }[], pointer: string): boolean {
  const parent = pointer.slice(0, pointer.lastIndexOf('/'));
  return issues.some(
    (i) =>
      i.pointer === pointer ||
      i.pointer.startsWith(`${pointer}/`) ||
      i.pointer === parent ||
      i.pointer.startsWith(`${parent}/`),
  );
}

/**
 * Where Tally is stricter than the schemas on purpose (docs/ahp-messages.md): a request id must
 * equal its event id (§2.1), and user.elicitation.result must name its request in parentEventId
 * (§5.2 event table; the schema leaves it optional).
 */
function stricterByDesign(issue: { pointer: string; rule: string }): boolean {
  return (
    issue.rule === 'rpc.id-mismatch' ||
    (issue.rule === 'required' && issue.pointer === '/params/event/parentEventId')
  );
}

interface Tally {
  stricter: number;
  mutants: number;
  rejectedByOfficial: number;
  agreed: number;
}

function runMutations(kind: 'drop' | 'wrong-type'): Tally {
  const tally: Tally = { mutants: 0, rejectedByOfficial: 0, agreed: 0, stricter: 0 };
  for (const c of VALID) {
    const message = (
      c.binding === 'stdio-jsonl' ? parseStdioLine(fixtureText(c)) : JSON.parse(fixtureText(c))
    ) as Json;
    for (const { parent, pointer } of [...members(message)]) {
      if (kind === 'drop' && Array.isArray(parent)) continue;
      const mutant = mutate(message, pointer, (p, k) => {
        if (kind === 'drop') delete (p as Json)[k as string];
        else (p as Json)[k as string] = wrongTypeFor((p as Json)[k as string]);
      });
      tally.mutants++;
      const official = officialAggregateValid(mutant);
      const issues = validateMessage(mutant);
      if (official === (issues.length === 0)) tally.agreed++;
      else if (official) {
        assert.ok(
          issues.every(stricterByDesign),
          `${c.id}: ${kind} ${pointer}: Tally rejects a valid mutant: ${JSON.stringify(issues)}`,
        );
        tally.stricter++;
      }
      if (official) continue;
      tally.rejectedByOfficial++;
      assert.ok(
        issues.length > 0,
        `${c.id}: ${kind} ${pointer} is rejected by the official schema but accepted by Tally`,
      );
      assert.ok(
        named(issues, pointer),
        `${c.id}: ${kind} ${pointer}: no issue names the field: ${JSON.stringify(issues)}`,
      );
    }
  }
  return tally;
}

describe('mutations of every valid fixture', () => {
  test('dropping any member: Tally rejects whatever the official schema rejects, naming the field', () => {
    const t = runMutations('drop');
    assert.ok(
      t.rejectedByOfficial > 300,
      `only ${t.rejectedByOfficial} of ${t.mutants} drops rejected officially`,
    );
    assert.equal(t.agreed + t.stricter, t.mutants, 'Tally and the official union agree on every other drop');
    assert.equal(t.stricter, 1);
  });

  test('giving any member a wrong type: Tally rejects whatever the official schema rejects, naming the field', () => {
    const t = runMutations('wrong-type');
    assert.ok(
      t.rejectedByOfficial > 500,
      `only ${t.rejectedByOfficial} of ${t.mutants} retypes rejected officially`,
    );
    assert.equal(
      t.agreed + t.stricter,
      t.mutants,
      'Tally and the official union agree on every other retype',
    );
    assert.equal(t.stricter, 3);
  });

  test('an unknown top-level event field is kept and accepted (forward compatibility)', () => {
    for (const c of VALID) {
      const message = JSON.parse(
        c.binding === 'stdio-jsonl' ? fixtureText(c).trim() : fixtureText(c),
      ) as Json;
      const event = (message.params as Json | undefined)?.event as Json | undefined;
      if (!event) continue;
      event['com.example.future'] = { anything: [1, 2] };
      assert.equal(officialAggregateValid(message), true, c.id);
      assert.deepEqual(validateMessage(message), [], c.id);
    }
  });

  test('an unknown effect type appended to any valid response rejects it whole', () => {
    for (const c of VALID) {
      const message = JSON.parse(
        c.binding === 'stdio-jsonl' ? fixtureText(c).trim() : fixtureText(c),
      ) as Json;
      const effects = (message.result as Json | undefined)?.effects;
      if (!Array.isArray(effects)) continue;
      effects.push({ type: 'com.example.unknown' });
      assert.equal(officialAggregateValid(message), false, c.id);
      const issues = validateMessage(message);
      assert.ok(
        issues.some((i) => i.pointer === `/result/effects/${effects.length - 1}/type`),
        `${c.id}: ${JSON.stringify(issues)}`,
      );
    }
  });
});

describe('rules beyond the schema', () => {
  const request = load('stdio.intercept-request.valid') as Json & {
    id: string;
    params: { event: { id: string; type: string }; capabilities: Json };
  };
  const deny = load('stdio.deny-response.valid');

  test('request id differing from the event id is rejected at /id', () => {
    const mutant = { ...structuredClone(request), id: 'evt_other' };
    assert.equal(officialAggregateValid(mutant), true, 'the schema cannot see it');
    const issues = validateMessage(mutant);
    assert.deepEqual(
      issues.map((i) => [i.pointer, i.rule]),
      [['/id', 'rpc.id-mismatch']],
    );
  });

  test('a response answers its own request id', () => {
    assert.deepEqual(validateInterceptResponse(deny, request), []);
    const issues = validateInterceptResponse({ ...deny, id: 'evt_stdio_002' }, request);
    assert.deepEqual(
      issues.map((i) => [i.pointer, i.rule]),
      [['/id', 'rpc.id-mismatch']],
    );
  });

  test('an effect the request did not advertise is rejected at its type', () => {
    const narrowed = structuredClone(request);
    narrowed.params.capabilities = { effects: ['message'] };
    const issues = validateInterceptResponse(deny, narrowed);
    assert.deepEqual(
      issues.map((i) => [i.pointer, i.rule]),
      [['/result/effects/0/type', 'effect.not-advertised']],
    );
  });
});

/**
 * The official interop scenarios: full request/response envelopes tagged by the kind of failure.
 * Correlation- and capability-invalid responses, and any the official response schema rejects,
 * must be rejected by the response validator; positive rows must be accepted. Application-invalid rows depend on a fixture-local
 * tool rule (positive integer `task`), except the exhausted continuation allowance, which is a
 * limit the request advertised.
 */
describe('interop scenarios', () => {
  const rows = (
    JSON.parse(readFileSync(new URL('ahp/interop/scenarios.json', SHARED), 'utf8')) as {
      scenarios: {
        id: string;
        tags: string[];
        request: Parameters<typeof validateInterceptResponse>[1];
        response: unknown;
      }[];
    }
  ).scenarios;
  for (const row of rows) {
    test(row.id, () => {
      assert.deepEqual(validateMessage(row.request), [], 'scenario requests are valid');
      const issues = validateInterceptResponse(row.response, row.request);
      const tags = new Set(row.tags);
      // The scenario file predates the newest schemas in two rows (inject values, optional continue
      // instruction); the official response schema decides the schema layer.
      if (!officialValid('intercept-response.schema.json', row.response))
        assert.ok(issues.length > 0, 'schema-invalid: rejected');
      else if (!tags.has('negative')) assert.deepEqual(issues, []);
      else if (tags.has('correlation-invalid') || tags.has('capability-invalid'))
        assert.ok(issues.length > 0, 'rejected');
      else if (row.id === 'flow-exhausted-allowance-rejects-message') {
        assert.deepEqual(
          issues.map((i) => i.rule),
          ['flow.continuations-exhausted'],
        );
      }
    });
  }
});
