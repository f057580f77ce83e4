/**
 * The validator decides in a first pass (generated object checkers, no JSON pointers) and reports
 * from a second (docs/ahp-messages.md). A first pass that found nothing where the report pass finds
 * an issue would let an invalid message through, so the two are held to the same verdict on every
 * official fixture and on mutants of every valid one: each member dropped, retyped, set to
 * undefined, and an unknown member added to each object. The official schema's verdict on the
 * fixtures themselves is checked in messages.test.ts; here the oracle is the report pass.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseStdioLine, validateMessage } from '../../src/ahp/messages/index.js';
import { onlyPass } from '../../src/ahp/messages/shape.js';
import { fixtureCases, fixturePresent, fixtureText, members, mutate } from './messages-oracle.js';

type Json = Record<string, unknown>;

const CASES = fixtureCases().filter(fixturePresent);

function parse(binding: string, text: string): unknown {
  return binding === 'stdio-jsonl' ? parseStdioLine(text) : JSON.parse(text);
}

/** Mutants of `message`, each a fresh copy changed in one place. */
function* mutants(message: Json): Generator<unknown> {
  const all = [...members(message)];
  const changes: ((parent: Json | unknown[], key: string | number) => void)[] = [
    (p, k) => (Array.isArray(p) ? p.splice(k as number, 1) : delete p[k as string]),
    (p, k) => {
      (p as Json)[k as string] = typeof (p as Json)[k as string] === 'string' ? 7 : 'seven';
    },
    (p, k) => {
      (p as Json)[k as string] = undefined;
    },
  ];
  for (const change of changes) for (const { pointer } of all) yield mutate(message, pointer, change);
  // An unknown member added to every object, the message itself included.
  yield { ...message, 'com.example.unlisted': 1 };
  for (const { parent, key, pointer } of all) {
    const child = (parent as Json)[key as string];
    if (typeof child !== 'object' || child === null || Array.isArray(child)) continue;
    yield mutate(message, pointer, (p, k) => {
      ((p as Json)[k as string] as Json)['com.example.unlisted'] = 1;
    });
  }
}

function verdicts(message: unknown): { first: boolean; report: boolean } {
  return {
    first: onlyPass('first', () => validateMessage(message)).length === 0,
    report: onlyPass('report', () => validateMessage(message)).length === 0,
  };
}

describe('validator: the deciding first pass agrees with the report pass', () => {
  test('on every official message fixture, valid and invalid', () => {
    assert.ok(CASES.length > 50, `only ${CASES.length} fixtures found`);
    let invalid = 0;
    for (const c of CASES) {
      let message: unknown;
      try {
        message = parse(c.binding, fixtureText(c));
      } catch {
        continue; // framing faults never reach the validator
      }
      const v = verdicts(message);
      assert.equal(v.first, v.report, `${c.id}: first pass ${v.first}, report pass ${v.report}`);
      if (!v.report) invalid++;
    }
    assert.ok(invalid > 10, `only ${invalid} invalid fixtures reached the validator`);
  });

  test('on mutants of every valid fixture (dropped, retyped, undefined, unknown member added)', () => {
    let checked = 0;
    let refused = 0;
    for (const c of CASES.filter((x) => x.expectedValid)) {
      for (const mutant of mutants(parse(c.binding, fixtureText(c)) as Json)) {
        const v = verdicts(mutant);
        checked++;
        if (!v.report) refused++;
        if (v.first !== v.report) {
          assert.fail(`${c.id}: first pass ${v.first}, report pass ${v.report}: ${JSON.stringify(mutant)}`);
        }
      }
    }
    assert.ok(checked > 2000 && refused > 500, `${checked} mutants, ${refused} refused`);
  });

  /** The official `observe-session-start.valid.json` fixture, parsed afresh. */
  function sessionStart(): { params: { event: Json } } & Json {
    const c = CASES.find((x) => x.id === 'http.observe-session-start.valid');
    assert.ok(c, 'the session.start fixture is in the corpus');
    return JSON.parse(fixtureText(c)) as { params: { event: Json } } & Json;
  }

  test('a member holding undefined is absent in both passes (it is not JSON and is never sent)', () => {
    const optional = sessionStart();
    optional.params.event.parentEventId = undefined;
    assert.deepEqual(validateMessage(optional), []);
    const required = sessionStart();
    required.params.event.id = undefined;
    assert.deepEqual(
      validateMessage(required).map((i) => [i.pointer, i.rule]),
      [['/params/event/id', 'required']],
    );
  });

  test('an object with another prototype is judged by the general checker', () => {
    class Event {
      constructor(fields: Json) {
        Object.assign(this, fields);
      }
    }
    const good = sessionStart();
    good.params.event = new Event(good.params.event) as Json;
    assert.deepEqual(validateMessage(good), []);
    const bad = sessionStart();
    bad.params.event = new Event({ ...bad.params.event, time: 'yesterday' }) as Json;
    assert.deepEqual(
      validateMessage(bad).map((i) => i.pointer),
      ['/params/event/time'],
    );
  });
});
