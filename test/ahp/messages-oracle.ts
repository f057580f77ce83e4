/**
 * Test oracle for the message validator: the official AHP draft fixtures (read in place from
 * ../shared) and the official draft schemas compiled with ajv (2020-12). ajv ships no format
 * implementations, so `uri` and `date-time` are defined here independently of Tally's code:
 * `uri` with the RFC 3986 parser ajv itself depends on plus the RFC 3986 character repertoire,
 * `date-time` from the RFC 3339 §5.6 grammar with calendar checks by Date.UTC.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fastUri from 'fast-uri';

export const SHARED = new URL('../../../../shared/', import.meta.url);
export const SCHEMA_DIR = new URL('ahp/schema/draft/', SHARED);
export const FIXTURE_DIR = new URL('ahp/fixtures/draft/', SHARED);
export const SCHEMA_BASE = 'https://agenthooksprotocol.org/schemas/draft/';

export interface FixtureCase {
  id: string;
  path: string;
  binding: 'http-json' | 'stdio-jsonl' | 'registration-json';
  schema: string;
  eventSchema?: string;
  expectedValid: boolean;
  aggregateExpectedValid?: boolean;
  contextualExpectedValid?: boolean;
  editContext?: { event: string; current: Record<string, unknown>; mode: string; action: string };
}

export function fixtureCases(): FixtureCase[] {
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', FIXTURE_DIR), 'utf8')) as {
    cases: FixtureCase[];
  };
  return manifest.cases.filter((c) => c.binding !== 'registration-json');
}

/** The fixture file's URL (manifest paths are relative to the corpus root). */
export function fixtureUrl(c: FixtureCase): URL {
  return new URL(c.path.replace(/^fixtures\/draft\//, ''), FIXTURE_DIR);
}

export function fixturePresent(c: FixtureCase): boolean {
  return existsSync(fixtureUrl(c));
}

export function fixtureText(c: FixtureCase): string {
  return readFileSync(fixtureUrl(c), 'utf8');
}

const RFC3986_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

function oracleUri(text: string): boolean {
  if (!RFC3986_CHARS.test(text)) return false;
  const parsed = fastUri.parse(text);
  return parsed.error === undefined && typeof parsed.scheme === 'string' && parsed.reference === 'absolute';
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

export function oracleDateTime(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as number[];
  const probe = new Date(Date.UTC(y as number, (mo as number) - 1, d));
  if (probe.getUTCMonth() !== (mo as number) - 1 || probe.getUTCDate() !== d) return false;
  if ((h as number) > 23 || (mi as number) > 59 || (s as number) > 60) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}

let compiled: Ajv2020 | undefined;

/** Every official draft schema in one ajv registry, with format checks on. */
export function officialAjv(): Ajv2020 {
  if (compiled) return compiled;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('uri', oracleUri);
  ajv.addFormat('date-time', oracleDateTime);
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json') && f !== 'manifest.json')) {
    ajv.addSchema(JSON.parse(readFileSync(new URL(file, SCHEMA_DIR), 'utf8')) as object);
  }
  compiled = ajv;
  return ajv;
}

/** Verdict of one official schema, named by its manifest path (`schema/draft/x.json`) or `$id` suffix. */
export function officialValid(schema: string, value: unknown): boolean {
  const id = SCHEMA_BASE + schema.replace(/^schema\/draft\//, '');
  const validate = officialAjv().getSchema(id);
  if (!validate) throw new Error(`official schema ${id} is not loaded`);
  return validate(value) as boolean;
}

/** The official verdict for a fixture case: its `schema`, plus `eventSchema` on `params.event`. */
export function officialCaseValid(c: FixtureCase, message: unknown): boolean {
  if (!officialValid(c.schema, message)) return false;
  if (!c.eventSchema) return true;
  const params = (message as { params?: { event?: unknown } }).params;
  return officialValid(c.eventSchema, params?.event);
}

export function officialAggregateValid(message: unknown): boolean {
  return officialValid('schema.json', message);
}

type JsonObject = Record<string, unknown>;

/** Target of `modify` per boundary in the contextual cases (spec §3 target mapping). */
export const CONTEXT_TARGETS: Record<string, string> = {
  'tool.after': 'output',
  'user.message.outbound': 'content',
  'user.elicitation.result': 'content',
};

/** A complete, schema-valid intercept request carrying the case's edit context. */
export function contextualRequest(ctx: NonNullable<FixtureCase['editContext']>, id: string) {
  const envelope = { id, source: 'urn:test:harness', type: ctx.event, time: '2026-09-15T12:00:00Z' };
  const target = CONTEXT_TARGETS[ctx.event] as string;
  const current = ctx.current[target];
  const payloads: Record<string, JsonObject> = {
    'tool.after': {
      outcome: 'ok',
      execution: { status: 'executed' },
      call: { id: 'call-1' },
      tool: { name: 'Read', input: {}, origin: 'native' },
      path: 'native',
      items: current,
    },
    'user.message.outbound': { message: { channel: 'chat', messages: current } },
    'user.elicitation.result': {
      parentEventId: 'elicit-request-1',
      elicitation: {
        server: 'example-server',
        mode: ctx.mode,
        action: ctx.action,
        result: {
          id: 'answer',
          kind: 'text',
          mediaType: 'text/plain',
          selection: 'body',
          text: JSON.stringify({ action: ctx.action, content: current }),
        },
      },
    },
  };
  const event = { ...envelope, ...payloads[ctx.event] } as JsonObject & { id: string; type: string };
  const capabilities = { effects: ['modify'], modify: { [target]: { replace: true, merge: true } } };
  return {
    jsonrpc: '2.0',
    id,
    method: 'hooks/intercept',
    params: { protocolVersion: 'draft', event, capabilities },
  };
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Every (container, key, pointer) inside a JSON value, depth first: the members a mutation test changes. */
export function* members(
  value: unknown,
  pointer = '',
): Generator<{ parent: JsonObject | unknown[]; key: string | number; pointer: string }> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      yield { parent: value, key: i, pointer: `${pointer}/${i}` };
      yield* members(value[i], `${pointer}/${i}`);
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      const child = `${pointer}/${escapePointer(key)}`;
      yield { parent: value as JsonObject, key, pointer: child };
      yield* members((value as JsonObject)[key], child);
    }
  }
}

/** Apply `change` to the member at `pointer` in a deep copy. */
export function mutate(
  message: JsonObject,
  pointer: string,
  change: (parent: JsonObject | unknown[], key: string | number) => void,
): JsonObject {
  const copy = structuredClone(message);
  for (const m of members(copy)) {
    if (m.pointer === pointer) {
      change(m.parent, m.key);
      return copy;
    }
  }
  throw new Error(`no member at ${pointer}`);
}
