/**
 * The event catalogue against its oracles: the event table of the spec digest (§5.2), the official
 * event union (`event.schema.json`), the interceptable union of `intercept-request.schema.json`,
 * the per-event capability bounds (`capabilities.schema.json` `$defs`), the manifest event enum
 * and the required members of each event definition (`catalogue-event.schema.json` and the files
 * it refers to).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  CORE_EFFECT_TYPES,
  catalogueEntry,
  EVENT_CATALOGUE,
  EVENT_FAMILIES,
  INTERCEPTABLE_EVENTS,
} from '../../src/ahp/protocol/catalogue.js';
import { SCHEMA_DIR, SHARED } from './messages-oracle.js';

type Json = Record<string, unknown>;

function schema(file: string): Json {
  return JSON.parse(readFileSync(new URL(file, SCHEMA_DIR), 'utf8')) as Json;
}

/** Resolve a `$ref` of the form `file.json#/$defs/name` (or a bare file) to its schema node. */
function resolve(ref: string, from: string): Json {
  const [file, fragment] = ref.split('#');
  const doc = schema(file || from);
  if (!fragment) return doc;
  return fragment
    .split('/')
    .filter(Boolean)
    .reduce<Json>((node, key) => node[key] as Json, doc);
}

/** Every `required` member along a definition: its own, its `allOf` parts and followed `$ref`s. */
function requiredOf(node: Json, file: string): Set<string> {
  const out = new Set<string>((node.required as string[] | undefined) ?? []);
  if (typeof node.$ref === 'string') {
    const target = node.$ref.split('#')[0] || file;
    for (const r of requiredOf(resolve(node.$ref, file), target)) out.add(r);
  }
  for (const part of (node.allOf as Json[] | undefined) ?? [])
    for (const r of requiredOf(part, file)) out.add(r);
  return out;
}

/** Event rows of the digest's §5.2 table: name and whether it is marked interceptable. */
function digestTable(): { type: string; interceptable: boolean }[] {
  const text = readFileSync(new URL('reference/ahp-spec.md', SHARED), 'utf8');
  const section = text.slice(text.indexOf('### 5.2 The 32 events'), text.indexOf('Tool-event details'));
  return [...section.matchAll(/^\| `([a-z.]+)` \|\s*(I?)\s*\|/gm)].map((m) => ({
    type: m[1] as string,
    interceptable: m[2] === 'I',
  }));
}

function refType(ref: unknown): string {
  const text = String(ref);
  if (text.includes('#/$defs/')) return text.slice(text.lastIndexOf('/') + 1);
  return text.replace('.schema.json', '').replace('-', '.');
}

describe('event catalogue', () => {
  test('32 events, 19 interceptable, exactly as the spec digest table lists them', () => {
    const table = digestTable();
    assert.equal(table.length, 32);
    assert.equal(EVENT_CATALOGUE.length, 32);
    assert.equal(INTERCEPTABLE_EVENTS.length, 19);
    assert.deepEqual(
      EVENT_CATALOGUE.map((e) => [e.type, e.interceptable]),
      table.map((row) => [row.type, row.interceptable]),
    );
  });

  test('the official event union holds exactly these 32 types', () => {
    const union = (schema('event.schema.json').oneOf as Json[]).map((b) => refType(b.$ref));
    assert.deepEqual([...union].sort(), EVENT_CATALOGUE.map((e) => e.type).sort());
    const manifestEnum = resolve(
      'capabilities-response.schema.json#/allOf/1/properties/result/properties/manifest/properties/events/items/properties/event',
      '',
    );
    assert.deepEqual([...(manifestEnum.enum as string[])].sort(), EVENT_CATALOGUE.map((e) => e.type).sort());
  });

  test('the intercept request union holds exactly the interceptable events', () => {
    const event = resolve('intercept-request.schema.json#/allOf/1/properties/params/properties/event', '');
    const union = (event.oneOf as Json[]).map((b) => refType(b.$ref));
    assert.deepEqual([...union].sort(), [...INTERCEPTABLE_EVENTS].sort());
  });

  test('per-event effects, modify targets and flow operations equal the capability bounds', () => {
    const defs = schema('capabilities.schema.json').$defs as Record<string, { allOf: Json[] }>;
    assert.deepEqual(Object.keys(defs).sort(), [...INTERCEPTABLE_EVENTS].sort());
    for (const entry of EVENT_CATALOGUE) {
      const def = defs[entry.type];
      if (!def) {
        assert.deepEqual(
          [entry.effects, entry.modifyTargets, entry.flowOperations],
          [[], [], []],
          entry.type,
        );
        continue;
      }
      const bounds = def.allOf[1]?.properties as Record<string, Json>;
      const effects = ((bounds.effects as Json).items as Json).enum as string[];
      const targets =
        ((bounds.modify?.propertyNames as Json | undefined)?.enum as string[] | undefined) ?? [];
      const flow = ((
        ((bounds.flow?.properties as Json | undefined)?.operations as Json | undefined)?.items as
          | Json
          | undefined
      )?.enum ?? []) as string[];
      assert.deepEqual([...entry.effects].sort(), [...effects].sort(), `${entry.type} effects`);
      assert.deepEqual([...entry.modifyTargets].sort(), [...targets].sort(), `${entry.type} modify targets`);
      assert.deepEqual([...entry.flowOperations].sort(), [...flow].sort(), `${entry.type} flow operations`);
      for (const effect of entry.effects)
        assert.ok((CORE_EFFECT_TYPES as readonly string[]).includes(effect));
    }
  });

  test('required payload members equal the official definitions (beyond id, source, type, time)', () => {
    const defs = schema('catalogue-event.schema.json').$defs as Record<string, Json>;
    const direct: Record<string, string> = {
      'tool.before': 'tool-before.schema.json',
      'tool.after': 'tool-after.schema.json',
      'session.start': 'session-start.schema.json',
      'session.end': 'session-end.schema.json',
    };
    for (const entry of EVENT_CATALOGUE) {
      const file = direct[entry.type];
      const required = file
        ? requiredOf(schema(file), file)
        : requiredOf(defs[entry.type] as Json, 'catalogue-event.schema.json');
      for (const envelope of ['id', 'source', 'type', 'time']) required.delete(envelope);
      // The digest's table (and the elicitation binding rules) require the request link on a result;
      // the schema leaves it optional. Tally follows the stricter text.
      if (entry.type === 'user.elicitation.result') required.add('parentEventId');
      assert.deepEqual([...entry.required].sort(), [...required].sort(), entry.type);
    }
  });

  test('families are the first name segments, and wildcard-shaped', () => {
    const expected = [...new Set(EVENT_CATALOGUE.map((e) => e.type.split('.')[0]))];
    assert.deepEqual([...EVENT_FAMILIES], expected);
    assert.equal(EVENT_FAMILIES.length, 11);
    for (const family of EVENT_FAMILIES) assert.match(`${family}.*`, /^[a-z][a-z0-9]*\.\*$/);
    for (const entry of EVENT_CATALOGUE) assert.ok(entry.type.startsWith(`${entry.family}.`));
  });

  test('lookup by type; unknown and removed names are not in the catalogue', () => {
    assert.equal(catalogueEntry('tool.before')?.interceptable, true);
    assert.equal(catalogueEntry('turn.end')?.interceptable, false);
    for (const removed of ['tool.error', 'prompt.submitted', 'agent.stop', 'compact.pre', 'other', '']) {
      assert.equal(catalogueEntry(removed), undefined, removed);
    }
    assert.ok(Object.isFrozen(EVENT_CATALOGUE) && Object.isFrozen(EVENT_CATALOGUE[0]));
  });
});
