/**
 * What Tally advertises: the `hooks/capabilities` manifest printed by the real `tally ahp
 * capabilities --json` process, checked by the official capabilities-response schema and by
 * Tally's own validator; and the per-request capabilities, checked against the official per-event
 * bounds in capabilities.schema.json. Also: the manifest validator rejects what the schema rejects.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { validateMessage } from '../../src/ahp/messages/index.js';
import { capabilitiesResult, requestCapabilities } from '../../src/ahp/protocol/capabilities.js';
import { EVENT_CATALOGUE } from '../../src/ahp/protocol/catalogue.js';
import { officialAjv, officialValid, SCHEMA_BASE } from './messages-oracle.js';

type Json = Record<string, unknown>;

function runCli(args: string[]) {
  return spawnSync(process.execPath, ['bin/tally.js', ...args], { encoding: 'utf8', cwd: process.cwd() });
}

function envelope(result: unknown): Json {
  return { jsonrpc: '2.0', id: 'discovery-1', result };
}

describe('tally ahp capabilities', () => {
  const run = runCli(['ahp', 'capabilities', '--json']);

  test('prints a hooks/capabilities result the official schema accepts', () => {
    assert.equal(run.status, 0, run.stderr);
    const result = JSON.parse(run.stdout) as Json;
    const ajv = officialAjv();
    const validate = ajv.getSchema(`${SCHEMA_BASE}capabilities-response.schema.json`);
    assert.ok(validate);
    assert.equal(validate(envelope(result)), true, JSON.stringify(validate.errors));
    assert.deepEqual(validateMessage(envelope(result)), []);
  });

  test('lists every catalogue event; intercept exactly on the interceptable ones; absent limits explained', () => {
    const manifest = (JSON.parse(run.stdout) as { manifest: Json }).manifest;
    const events = manifest.events as { event: string; modes: string[]; capabilities?: Json }[];
    assert.deepEqual(
      events.map((e) => [e.event, e.modes.includes('intercept')]),
      EVENT_CATALOGUE.map((e) => [e.type, e.interceptable]),
    );
    const gapPaths = (manifest.gaps as { path: string }[]).map((g) => g.path);
    for (const limit of ['maxUploadBytes', 'maxContinuations', 'minTimeoutMs', 'maxTimeoutMs']) {
      const limits = manifest.limits as Json;
      assert.ok(
        limit in limits || gapPaths.includes(`limits.${limit}`),
        `${limit} is stated or explained as a gap (§2.3)`,
      );
    }
    assert.equal(manifest.identity, undefined);
  });

  test('human output goes to stdout without --json and names every event', () => {
    const human = runCli(['ahp', 'capabilities']);
    assert.equal(human.status, 0);
    for (const entry of EVENT_CATALOGUE) assert.ok(human.stdout.includes(entry.type), entry.type);
    assert.equal(runCli(['ahp', 'capabilities', 'extra']).status, 2);
  });
});

describe('per-request capabilities', () => {
  test('every interceptable event gets capabilities within its official bounds; others get none', () => {
    for (const entry of EVENT_CATALOGUE) {
      const caps = requestCapabilities(entry.type);
      if (!entry.interceptable) {
        assert.equal(caps, undefined, entry.type);
        continue;
      }
      assert.ok(caps);
      assert.equal(officialValid(`capabilities.schema.json#/$defs/${entry.type}`, caps), true, entry.type);
    }
  });

  test('a Tool Interception harness advertises deny at tool.before (AHP-CAP-002)', () => {
    assert.ok(requestCapabilities('tool.before')?.effects.includes('deny'));
  });

  test('continuation counters track the allowance', () => {
    const flow = requestCapabilities('turn.finish.before', {
      continuationCount: 2,
      maxContinuations: 3,
    })?.flow;
    assert.deepEqual(flow, {
      operations: ['stop', 'continue'],
      remainingContinuations: 1,
      continuationCount: 2,
      maxContinuations: 3,
    });
  });
});

describe('manifest rules', () => {
  const base = capabilitiesResult() as unknown as { protocolVersion: string; manifest: Json };
  const variants: [string, (m: Json) => void, string][] = [
    [
      'intercept on an observe-only event',
      (m) => (((m.events as Json[])[1] as Json).modes as string[]).push('intercept'),
      '/result/manifest/events/1/modes/1',
    ],
    [
      'observe-only entry claiming effects',
      (m) => Object.assign((m.events as Json[])[1] as Json, { capabilities: { effects: ['deny'] } }),
      '/result/manifest/events/1/capabilities',
    ],
    [
      'intercept entry without capabilities',
      (m) => delete ((m.events as Json[])[0] as Json).capabilities,
      '/result/manifest/events/0/capabilities',
    ],
    [
      'managed scope that can be disabled',
      (m) => Object.assign(m, { managedPolicy: { scopes: ['managed'], disableable: true } }),
      '/result/manifest/managedPolicy/disableable',
    ],
    ['an identity block', (m) => Object.assign(m, { identity: { sub: 'x' } }), '/result/manifest/identity'],
    [
      'an unknown transport',
      (m) => (m.transports as string[]).push('carrier-pigeon'),
      '/result/manifest/transports/2',
    ],
    [
      'a negative limit',
      (m) => Object.assign(m.limits as Json, { maxContinuations: -1 }),
      '/result/manifest/limits/maxContinuations',
    ],
  ];
  for (const [name, change, pointer] of variants) {
    test(`rejects ${name}`, () => {
      const result = structuredClone(base);
      change(result.manifest);
      assert.equal(
        officialValid('capabilities-response.schema.json', envelope(result)),
        false,
        'the official schema rejects it',
      );
      const issues = validateMessage(envelope(result));
      assert.ok(
        issues.some((i) => i.pointer === pointer || i.pointer.startsWith(`${pointer}/`)),
        JSON.stringify(issues),
      );
    });
  }
});
