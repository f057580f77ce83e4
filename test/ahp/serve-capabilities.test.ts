/**
 * Discovery on the backend side: `tally ahp serve` answers `hooks/capabilities` (the official
 * request fixture, sent as is) with a manifest the official response schema accepts, over a real
 * stdio process; and the backend kit checks `inject` against the advertisement's `context` block,
 * where the official capabilities schema puts `append` and `deliverAt`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createBackend } from '../../src/ahp/backend/kit.js';
import { loadScenarioRows, officialSchemas } from './scenario-replay.js';
import { tempDir } from './transport-helpers.js';

const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));
const FIXTURES = new URL('../../../../shared/ahp/fixtures/draft/http/', import.meta.url);
const RESPONSE_SCHEMA = 'https://agenthooksprotocol.org/schemas/draft/capabilities-response.schema.json';
const INTERCEPT_RESPONSE = 'https://agenthooksprotocol.org/schemas/draft/intercept-response.schema.json';
const ajv = officialSchemas();

type Rpc = {
  id: unknown;
  result?: {
    manifest?: { events: { event: string; modes: string[]; capabilities?: { effects: string[] } }[] };
  };
  error?: { code: number; data?: Record<string, unknown> };
};

async function serveLines(rules: unknown, lines: string[]): Promise<Rpc[]> {
  const file = join(tempDir(), 'rules.json');
  writeFileSync(file, JSON.stringify(rules));
  const child = spawn(process.execPath, [TALLY, 'ahp', 'serve', '--stdio', '--rules', file], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stdin.end(lines.map((l) => `${l}\n`).join(''));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  assert.equal(code, 0);
  return out
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Rpc);
}

describe('tally ahp serve answers hooks/capabilities', { timeout: 30_000 }, () => {
  const request = readFileSync(new URL('capabilities-request.valid.json', FIXTURES), 'utf8');
  const rules = {
    rules: [
      { events: ['tool.before'], match: { tool: 'Bash' }, effect: 'deny', message: 'no shell' },
      { events: ['model.*'], effect: 'allow', message: 'model call noted' },
    ],
  };

  test('the official discovery request gets a schema-valid manifest of what the rules can do', async () => {
    const [answer] = await serveLines(rules, [request.replace(/\s*\n\s*/g, '')]);
    assert.ok(answer);
    assert.ok(ajv.validate(RESPONSE_SCHEMA, answer), JSON.stringify(ajv.errors));
    assert.equal(answer.id, 'discovery');
    const events = answer.result?.manifest?.events ?? [];
    // tool.before from the first rule; the model family's interceptable events from the second,
    // where the catalogue allows `message` but not `allow`.
    assert.deepEqual(
      events.map((e) => e.event),
      ['tool.before', 'model.request.before', 'model.response.after', 'model.switch.before'],
    );
    assert.deepEqual(events[0], {
      event: 'tool.before',
      modes: ['intercept'],
      capabilities: { effects: ['deny'] },
    });
    for (const e of events.slice(1)) assert.deepEqual(e.capabilities?.effects, ['message']);
  });

  test('discovery params other than protocolVersion are refused with -32602, a wrong version with -32001', async () => {
    const base = JSON.parse(request) as Record<string, unknown>;
    const answers = await serveLines(rules, [
      JSON.stringify({ ...base, params: { protocolVersion: 'draft', session: 'x' } }),
      JSON.stringify({ ...base, params: { protocolVersion: '2020-01-01' } }),
    ]);
    assert.equal(answers[0]?.error?.code, -32602);
    assert.equal(answers[1]?.error?.code, -32001);
    assert.deepEqual(answers[1]?.error?.data, { supported: ['draft'] });
  });
});

describe('backend kit: inject is checked against capabilities.inject.context', () => {
  const row = loadScenarioRows().find((r) => JSON.stringify(r.request).includes('"inject"'));
  const request = row?.request as { params: { capabilities: Record<string, unknown> } } | undefined;

  test('an advertised inject passes; a delivery time outside deliverAt is refused with -32004', async () => {
    assert.ok(request, 'the interop scenarios hold a request that advertises inject');
    const caps = request.params.capabilities as { inject: { context: { deliverAt: string[] } } };
    const at = caps.inject.context.deliverAt[0]!;
    const inject = { type: 'inject', target: 'context', operation: 'append', deliverAt: at, value: [] };
    const ok = (await createBackend({ intercept: () => [inject] }).handleMessage(request)) as Rpc;
    assert.ok(ajv.validate(INTERCEPT_RESPONSE, ok), JSON.stringify(ajv.errors ?? ok));
    const narrowed = {
      ...request,
      params: {
        ...request.params,
        // The other delivery time of the schema's two (`now`, `next_turn`): valid, but not `at`.
        capabilities: {
          ...caps,
          inject: { context: { append: true, deliverAt: [at === 'now' ? 'next_turn' : 'now'] } },
        },
      },
    };
    const refused = (await createBackend({ intercept: () => [inject] }).handleMessage(narrowed)) as Rpc;
    assert.equal(refused.error?.code, -32004);
    // An advertisement the schema refuses is not the backend's failure: invalid params.
    const invalid = {
      ...request,
      params: {
        ...request.params,
        capabilities: { ...caps, inject: { context: { append: true, deliverAt: ['later'] } } },
      },
    };
    const rejected = (await createBackend({ intercept: () => [inject] }).handleMessage(invalid)) as Rpc;
    assert.equal(rejected.error?.code, -32602);
  });
});
