/**
 * `native` (the harness's raw native payload) never leaves the process for a subscription without
 * `includeNative`, wherever the event carries it. The oracle for where it may sit is the draft
 * schema set in ../shared: the test walks the event union (event.schema.json) through every `$ref`
 * and lists each instance location of a `native` member, checks that list against the one this
 * file states, then builds an event of every listed type with a native payload at every location.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { InterceptCapabilities } from '../../src/ahp/harness/compose.js';
import { selectContent, selectContentNoting } from '../../src/ahp/harness/content.js';
import type { ContentSelection } from '../../src/ahp/registration/types.js';
import type { CanonicalEvent } from '../../src/evidence/record/record.js';
import { intercept, observe, setup } from './dispatch-helpers.js';

type Json = Record<string, unknown>;

const SCHEMAS = new URL('../../../../shared/ahp/schema/draft/', import.meta.url);
const NATIVE_REF = 'common.schema.json#/$defs/native';
const BODY: ContentSelection = { default: 'body', categories: {} };

function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const documents = new Map<string, Json>();
for (const name of readdirSync(SCHEMAS)) {
  if (name.endsWith('.schema.json'))
    documents.set(name, JSON.parse(readFileSync(new URL(name, SCHEMAS), 'utf8')));
}

/** The schema a `$ref` names, with the document it sits in. */
function resolve(ref: string, base: string): { node: Json; file: string } {
  const [file = '', fragment = ''] = ref.split('#');
  const doc = file === '' ? base : file;
  let node: unknown = documents.get(doc);
  for (const segment of fragment.split('/').filter(Boolean)) {
    node = (node as Json)[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  assert.ok(isJsonObject(node), `${ref} resolves from ${base}`);
  return { node, file: doc };
}

/** The full `file#fragment` form of a `$ref`, for cycle checks and the native reference. */
function absolute(ref: string, base: string): string {
  return ref.startsWith('#') ? `${base}${ref}` : ref;
}

/**
 * Every instance location (dotted, `[]` for an array item) where a schema lets a `native` member
 * sit, for one event schema. `extensions` is an opaque payload and not walked.
 */
function nativeLocations(root: Json, file: string): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown, base: string, path: string, seen: ReadonlySet<string>): void => {
    if (!isJsonObject(node)) return;
    if (typeof node.$ref === 'string') {
      const ref = absolute(node.$ref, base);
      const key = `${ref}@${path}`;
      if (!seen.has(key)) {
        const target = resolve(node.$ref, base);
        visit(target.node, target.file, path, new Set([...seen, key]));
      }
    }
    for (const k of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) {
      const list = node[k];
      if (Array.isArray(list)) for (const sub of list) visit(sub, base, path, seen);
    }
    for (const k of ['if', 'then', 'else', 'not']) visit(node[k], base, path, seen);
    if (isJsonObject(node.items)) visit(node.items, base, `${path}[]`, seen);
    if (isJsonObject(node.additionalProperties)) visit(node.additionalProperties, base, `${path}.*`, seen);
    if (isJsonObject(node.patternProperties)) {
      for (const sub of Object.values(node.patternProperties)) visit(sub, base, `${path}.*`, seen);
    }
    if (isJsonObject(node.properties)) {
      for (const [name, sub] of Object.entries(node.properties)) {
        const at = path === '' ? name : `${path}.${name}`;
        if (name === 'native') {
          assert.ok(isJsonObject(sub) && typeof sub.$ref === 'string', `${file} ${at} is a $ref`);
          assert.equal(absolute(sub.$ref, base), NATIVE_REF, `${file} ${at} is the native payload`);
          found.add(at);
        } else if (name !== 'extensions') {
          visit(sub, base, at, seen);
        }
      }
    }
  };
  visit(root, file, '', new Set());
  return found;
}

/** The `type` constant of an event schema, following `$ref` and `allOf`. */
function eventType(node: Json, file: string): string | undefined {
  const properties = node.properties;
  if (
    isJsonObject(properties) &&
    isJsonObject(properties.type) &&
    typeof properties.type.const === 'string'
  ) {
    return properties.type.const;
  }
  if (typeof node.$ref === 'string') {
    const target = resolve(node.$ref, file);
    const found = eventType(target.node, target.file);
    if (found) return found;
  }
  if (Array.isArray(node.allOf)) {
    for (const sub of node.allOf) {
      const found = isJsonObject(sub) ? eventType(sub, file) : undefined;
      if (found) return found;
    }
  }
  return undefined;
}

/** Location -> the event types whose schema allows a `native` member there. */
function schemaLocations(): Map<string, string[]> {
  const union = documents.get('event.schema.json')?.oneOf;
  assert.ok(Array.isArray(union) && union.length > 0, 'event.schema.json is a oneOf union');
  const out = new Map<string, string[]>();
  for (const member of union as Json[]) {
    const type = eventType(member, 'event.schema.json');
    assert.ok(type, `${String(member.$ref)} has a type constant`);
    for (const location of nativeLocations(member, 'event.schema.json')) {
      out.set(location, [...(out.get(location) ?? []), type]);
    }
  }
  for (const types of out.values()) types.sort();
  return out;
}

const LOCATIONS = schemaLocations();
const EVENT_TYPES = (() => {
  const union = documents.get('event.schema.json')?.oneOf as Json[];
  return union.map((member) => eventType(member, 'event.schema.json') as string).sort();
})();

/** Where this file says the schemas put `native`; checked against the walk above. */
const STATED: Record<string, string[]> = {
  // Every event's own payload.
  native: EVENT_TYPES,
  // execution-event.schema.json $defs/error, held by these events' `error`.
  'error.native': ['model.error', 'tool.after', 'turn.end'],
};

test('the schema locations of native are the stated ones', () => {
  assert.ok(EVENT_TYPES.length >= 30, `the union lists every event (${EVENT_TYPES.length})`);
  assert.deepStrictEqual(
    Object.fromEntries([...LOCATIONS].sort(([a], [b]) => a.localeCompare(b))),
    Object.fromEntries(Object.entries(STATED).sort(([a], [b]) => a.localeCompare(b))),
  );
});

/** The value at a dotted location (`[]` takes the first item), or undefined. */
function at(value: unknown, location: string): unknown {
  let node = value;
  for (const raw of location.split('.')) {
    const list = raw.endsWith('[]');
    const key = list ? raw.slice(0, -2) : raw;
    if (!isJsonObject(node)) return undefined;
    node = node[key];
    if (list) node = Array.isArray(node) ? node[0] : undefined;
  }
  return node;
}

/** Whether the dotted location's parent object holds the final key. */
function holds(value: unknown, location: string): boolean {
  const dot = location.lastIndexOf('.');
  const parent = dot < 0 ? value : at(value, location.slice(0, dot));
  return isJsonObject(parent) && Object.hasOwn(parent, location.slice(dot + 1));
}

/** Sets `payload` at the dotted location, creating objects (and one-item arrays for `[]`). */
function place(event: Json, location: string, payload: unknown): void {
  const segments = location.split('.');
  let node: Json = event;
  segments.forEach((raw, i) => {
    const list = raw.endsWith('[]');
    const key = list ? raw.slice(0, -2) : raw;
    if (i === segments.length - 1) {
      node[key] = payload;
      return;
    }
    if (list) {
      if (!Array.isArray(node[key])) node[key] = [{}];
      node = (node[key] as Json[])[0] as Json;
    } else {
      if (!isJsonObject(node[key])) node[key] = {};
      node = node[key] as Json;
    }
  });
}

/** The event of the official catalogue suite's `catalogue:<type>` row (a valid one of that type). */
function catalogueEvent(type: string): CanonicalEvent {
  const suite = JSON.parse(
    readFileSync(new URL('../../../../shared/ahp/interop/catalogue-scenarios.json', import.meta.url), 'utf8'),
  ) as { scenarios: { id: string; steps: { message?: { params: { event: CanonicalEvent } } }[] }[] };
  const row = suite.scenarios.find((r) => r.id === `catalogue:${type}`);
  const event = row?.steps[0]?.message?.params.event;
  assert.ok(event, `the catalogue suite has a ${type} event`);
  return structuredClone(event);
}

function baseEvent(type: string): CanonicalEvent {
  return {
    id: `evt-${type}`,
    source: 'urn:test',
    type,
    time: '2026-01-01T00:00:00Z',
    items: [{ id: 'p1', kind: 'text', mediaType: 'text/plain', selection: 'body', text: 'hello' }],
    extensions: { 'org.example': { keep: true } },
  };
}

/** The paths of every `native` member in a value, skipping tool input (tool arguments). */
function nativePaths(value: unknown, path = '', inside = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => nativePaths(item, `${path}/${i}`, ''));
  if (!isJsonObject(value)) return [];
  const out: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    if (inside === 'tool' && key === 'input') continue;
    if (key === 'native') out.push(`${path}/native`);
    else out.push(...nativePaths(child, `${path}/${key}`, key));
  }
  return out;
}

for (const [location, types] of LOCATIONS) {
  test(`native at ${location} is removed without includeNative and kept as is with it`, () => {
    for (const type of types) {
      // A nested location's holder also has a field of its own (for error, its message).
      const event: CanonicalEvent = { ...baseEvent(type), error: { message: 'x' } };
      const payload = { secretStack: `stack of ${type} at ${location}` };
      place(event, location, payload);
      // Every other schema location of the same event also carries one, so nothing shadows it.
      for (const [other, otherTypes] of LOCATIONS) {
        if (other !== location && otherTypes.includes(type)) place(event, other, { other: true });
      }
      const before = JSON.stringify(event);

      const hidden = selectContent(event, BODY, false);
      assert.equal(holds(hidden, location), false, `${type}: ${location} is removed`);
      assert.deepStrictEqual(nativePaths(hidden), [], `${type}: no native member is left`);
      assert.equal(JSON.stringify(hidden).includes('secretStack'), false, `${type}: nothing of it is sent`);
      assert.deepStrictEqual(at(hidden, 'extensions'), { 'org.example': { keep: true } });
      assert.equal(JSON.stringify(event), before, `${type}: the event is not mutated`);

      const shown = selectContent(event, BODY, true);
      assert.equal(at(shown, location), payload, `${type}: ${location} is the event's own object`);
      assert.equal(at(shown, 'extensions'), at(event, 'extensions'), `${type}: extensions stay opaque`);
      if (location.includes('.')) {
        const parent = location.slice(0, location.lastIndexOf('.'));
        assert.deepStrictEqual(
          at(shown, parent),
          at(event, parent),
          `${type}: the rest of ${parent} is kept`,
        );
      }
    }
  });
}

test('a native member off the schema locations is removed too, at any depth and in lists', () => {
  const deep = { secretStack: 'deep' };
  const event: CanonicalEvent = {
    ...baseEvent('tool.batch.after'),
    batch: { id: 'b1' },
    calls: [
      {
        call: { id: 'c1' },
        tool: { name: 'shell', origin: 'native', input: { command: 'ls' } },
        path: 'native',
        outcome: 'error',
        execution: { status: 'executed', native: deep },
        error: { message: 'x', native: deep },
      },
    ],
    model: { id: 'm', native: [deep] },
  };
  const hidden = selectContent(event, BODY, false);
  assert.deepStrictEqual(nativePaths(hidden), []);
  assert.deepStrictEqual(at(hidden, 'calls[].error'), { message: 'x' });
  assert.deepStrictEqual(at(hidden, 'calls[].execution'), { status: 'executed' });
  const shown = selectContent(event, BODY, true);
  assert.equal(at(shown, 'calls[].error.native'), deep);
  assert.equal(at(shown, 'calls[].execution.native'), deep);
  assert.equal(at(shown, 'model.native'), (event.model as Json).native);
});

test('a native key inside tool input is a tool argument and is kept, at the top and in batch calls', () => {
  const arg = { flag: 'the tool takes a native argument' };
  const event: CanonicalEvent = {
    ...baseEvent('tool.batch.after'),
    tool: { name: 'build', origin: 'native', input: { native: arg } },
    batch: { id: 'b1' },
    calls: [
      {
        call: { id: 'c1' },
        tool: { name: 'build', origin: 'native', input: { native: arg, target: 'x' } },
        path: 'native',
        outcome: 'ok',
        execution: { status: 'executed' },
      },
    ],
    native: { raw: true },
  };
  for (const includeNative of [false, true]) {
    const view = selectContent(event, BODY, includeNative);
    assert.equal(at(view, 'tool.input'), (event.tool as Json).input, 'the event tool input is kept as is');
    assert.equal(at(view, 'calls[].tool.input.native'), arg, 'a batch call input keeps its native argument');
    assert.equal(at(view, 'calls[].tool.input.target'), 'x');
    assert.equal(holds(view, 'native'), includeNative);
  }
});

test('removing native keeps the attachment note and the other opaque payloads', () => {
  const params = { temperature: 0, native: { apiParam: true } };
  const event: CanonicalEvent = {
    ...baseEvent('model.error'),
    params,
    error: { message: 'x', native: { secretStack: 's' } },
  };
  const noted = selectContentNoting(event, BODY, false);
  assert.equal(noted.attachments, false, 'no attachment anywhere');
  assert.equal(at(noted.view, 'params'), params, 'params is opaque and shared');
  assert.deepStrictEqual(at(noted.view, 'error'), { message: 'x' });
  const withPart = {
    ...event,
    error: {
      message: 'x',
      native: { secretStack: 's' },
      detail: [{ id: 'a', kind: 'attachment', mediaType: 'image/png', selection: 'body', body: 'AA==' }],
    },
  };
  assert.equal(selectContentNoting(withPart, BODY, false).attachments, true, 'a part beside native is noted');
});

test('the dispatcher never sends a nested native to a subscription without includeNative', async () => {
  const { dispatcher, received } = setup([
    { id: 'org.example.plain', subs: [intercept('plain', { events: ['tool.after'] }), observe('all')] },
    { id: 'org.example.native', subs: [observe('native', { includeNative: true })] },
  ]);
  const caps: InterceptCapabilities = { effects: ['message'] };
  const nested = STATED['error.native'] as string[];
  const sent: CanonicalEvent[] = [];
  try {
    for (const type of nested) {
      // A valid event of the type from the official catalogue suite, failed so that it carries an
      // `error` (the dispatcher validates what it sends, so the event must be schema-valid).
      const event = catalogueEvent(type);
      if (type === 'tool.after') event.outcome = 'error';
      if (type === 'turn.end') event.outcome = 'failed';
      event.error = { message: 'x', class: 'example' };
      for (const [location, types] of LOCATIONS) {
        if (types.includes(type)) place(event, location, { secretStack: `${type} ${location}` });
      }
      if (type === 'tool.after') {
        event.tool = { name: 'shell', origin: 'native', input: { command: 'ls', native: 'an argument' } };
      }
      sent.push(event);
      await dispatcher.dispatch({ event, capabilities: caps });
    }
  } finally {
    await dispatcher.close();
  }

  const plain = received.get('org.example.plain') ?? [];
  const native = received.get('org.example.native') ?? [];
  assert.deepStrictEqual(
    plain.map((m) => [m.method, (m.params as { event: Json }).event.type]),
    [
      ['hooks/observe', 'model.error'],
      ['hooks/intercept', 'tool.after'],
      ['hooks/observe', 'tool.after'],
      ['hooks/observe', 'turn.end'],
    ],
  );
  for (const message of plain) {
    const event = (message.params as { event: Json }).event;
    assert.deepStrictEqual(
      nativePaths(event),
      [],
      `${message.method} ${String(event.type)} carries no native`,
    );
    assert.equal(JSON.stringify(event).includes('secretStack'), false);
    assert.ok(isJsonObject(event.error) && event.error.message === 'x', 'the rest of error is sent');
    if (event.type === 'tool.after') assert.equal(at(event, 'tool.input.native'), 'an argument');
  }
  assert.equal(native.length, nested.length);
  native.forEach((message, i) => {
    const event = (message.params as { event: Json }).event;
    const original = sent[i] as Json;
    assert.deepStrictEqual(event.native, original.native);
    assert.deepStrictEqual(at(event, 'error.native'), at(original, 'error.native'));
  });
});

test('tool input is arguments everywhere: a batch call input is kept as is, like the event tool input', () => {
  // A value shaped like a content part inside tool input is an argument of the tool, not content.
  const partLike = { kind: 'text', mediaType: 'text/plain', selection: 'body', text: 'argument text' };
  const input = { note: partLike, list: [partLike] };
  const event = {
    ...baseEvent('tool.batch.after'),
    tool: { name: 'edit', origin: 'native', input },
    calls: [{ call: { id: 'c1' }, tool: { name: 'edit', origin: 'native', input } }],
  } as CanonicalEvent;
  const view = selectContent(event, { default: 'omit', categories: {} }, false) as Json;
  assert.equal((view.tool as Json).input, input, 'the event tool input is the same object');
  const call = (view.calls as Json[])[0] as Json;
  assert.equal((call.tool as Json).input, input, 'a batch call input too');
  assert.deepEqual(view.items, [], 'content outside tool input is still selected');
});

test('copy on write: nothing withheld, nothing copied; what changes is copied, the input never changes', () => {
  const plain: CanonicalEvent = {
    ...baseEvent('tool.before'),
    tool: { name: 'shell', origin: 'native', input: { command: 'ls' } },
    call: { id: 'c1' },
    path: 'native',
  };
  assert.equal(
    selectContent(plain, BODY, false),
    plain,
    'an event with nothing to withhold is sent as it is',
  );

  const session = { id: 's1', cwd: '/repo' };
  const event: CanonicalEvent = { ...plain, session, error: { message: 'x', native: { stack: 's' } } };
  const before = structuredClone(event);
  const view = selectContent(event, BODY, false);
  assert.notEqual(view, event);
  assert.deepStrictEqual(event, before, 'the input is unchanged');
  assert.equal(at(view, 'session'), session, 'an untouched member is shared');
  assert.deepStrictEqual(at(view, 'error'), { message: 'x' });
  assert.deepStrictEqual(Object.keys(view), Object.keys(event), 'member order is kept');
});

test('a member named __proto__ stays a member when its object is copied', () => {
  const text = JSON.stringify({
    ...baseEvent('tool.before'),
    tool: { name: 'shell', origin: 'native', input: {} },
    extra: { ['__proto__']: { polluted: true }, native: { raw: 1 } },
  });
  const event = JSON.parse(text) as CanonicalEvent;
  // JSON.parse keeps "__proto__" as an own member, as a strict reader does.
  assert.ok(Object.hasOwn(event.extra as Json, '__proto__'));
  const view = selectContent(event, BODY, false);
  const extra = view.extra as Json;
  assert.ok(Object.hasOwn(extra, '__proto__'), 'still an own member');
  assert.equal(Object.getPrototypeOf(extra), Object.prototype, 'not turned into a prototype');
  assert.equal(Object.hasOwn(extra, 'native'), false);
});
