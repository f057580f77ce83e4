/**
 * The certificate judge as the only backend answers without the dispatcher (src/boundary/
 * judge-alone.ts). Oracle: the dispatcher itself. Every event of the official AHP interop corpus,
 * and calls each certificate allows, forbids or escalates, go through two boundaries under the same
 * certificate: one taking the shortcut, one forced through the dispatcher and its in-process
 * transport (a `wrapJudge` that changes nothing). Their answers and their records must be the same,
 * latency aside.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { BoundaryDecision } from '../../src/boundary/boundary.js';
import { judgeAlone } from '../../src/boundary/judge-alone.js';
import { prepareEvent } from '../../src/boundary/prepare.js';
import type { AgentCertificate } from '../../src/evidence/certificate.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { INTEROP } from '../ahp/scenario-replay.js';
import { type BoundaryFixture, certificateFor, openFixture, toolBefore } from './fixture.js';

type JsonObject = Record<string, unknown>;

/** Every object held under an `event` key anywhere in the interop files: the corpus's events. */
function corpusEvents(): JsonObject[] {
  const out: JsonObject[] = [];
  const walk = (value: unknown, key: string) => {
    if (Array.isArray(value)) for (const item of value) walk(item, '');
    else if (value !== null && typeof value === 'object') {
      const object = value as JsonObject;
      if (key === 'event' && typeof object.type === 'string' && typeof object.id === 'string')
        out.push(object);
      for (const [k, v] of Object.entries(object)) walk(v, k);
    }
  };
  for (const file of readdirSync(INTEROP).filter((f) => f.endsWith('.json')))
    walk(JSON.parse(readFileSync(new URL(file, INTEROP), 'utf8')), '');
  return out;
}

const hour = 3_600_000;
const CERTIFICATES: Record<string, () => AgentCertificate> = {
  'allows, forbids and escalates': () =>
    certificateFor({
      allow: ['Bash(*)', 'Write(*)', 'Read(*)', 'task(*)', 'mcp__*'],
      forbid: ['Bash(rm -rf *)', 'Write(secrets/**)'],
      escalate: ['Bash(git push*)'],
    }),
  'allows nothing listed': () => certificateFor({ allow: ['Read(docs/**)'] }),
  expired: () => certificateFor({ allow: ['Bash(*)'] }, new Date(Date.now() - hour / 2)),
};

/** Hand-made calls over the certificates' patterns, and shapes the shortcut must hand back. */
function madeEvents(): JsonObject[] {
  return [
    toolBefore('Bash', { command: 'ls -la' }),
    toolBefore('Bash', { command: 'rm -rf build' }),
    toolBefore('Bash', { command: 'git push origin main' }),
    toolBefore('Bash', { command: 'echo hi > secrets/key' }),
    toolBefore('Write', { file_path: 'secrets/token', content: 'x' }),
    toolBefore('Write', { file_path: 'src/a.ts', content: 'x' }),
    toolBefore('Read', { file_path: 'docs/a.md' }),
    toolBefore('mcp__fs__write_file', { path: 'a.txt', content: 'x' }),
    { ...toolBefore('Bash', { command: 'ls' }), surprise: true },
    { ...toolBefore('Bash', { command: 'ls' }), call: { id: 'call-u', surprise: true } },
    { ...toolBefore('Bash', { command: 'ls' }), continuationCount: 1 },
    {
      ...toolBefore('Bash', { command: 'ls' }),
      prompt: { parts: [{ type: 'text', text: 'hello' }] },
    },
    {
      type: 'tool.after',
      call: { id: 'call-x' },
      path: 'native',
      tool: { origin: 'native', name: 'Bash', input: { command: 'ls' } },
      result: { ok: true },
    },
  ];
}

/** What must be the same on both paths: the answer without its record's place and the latencies. */
function comparable(decision: BoundaryDecision) {
  const { recorded: _recorded, ...rest } = decision;
  return { ...rest, answers: rest.answers.map(({ latency_ms: _l, ...a }) => a) };
}

function recordPart(record: EventRecord | undefined) {
  if (record === undefined) return undefined;
  const { decision, answers, flags, resolved, event, source } = record as unknown as JsonObject & {
    answers?: JsonObject[];
  };
  // Tally fills an id and a time where the input has none (a refusal's record always): not compared.
  const { id: _id, time: _time, ...rest } = event as JsonObject;
  return {
    decision,
    answers: answers?.map(({ latency_ms: _l, ...a }) => a),
    flags,
    resolved,
    event: rest,
    source,
  };
}

describe('the certificate judge alone gives the dispatcher\u2019s answers', () => {
  const events = [...corpusEvents(), ...madeEvents()];

  test('the corpus holds events to compare', () => {
    assert.ok(events.filter((e) => e.type === 'tool.before').length >= 60, 'tool.before events');
    assert.ok(new Set(events.map((e) => e.type)).size >= 10, 'event types');
  });

  for (const [name, make] of Object.entries(CERTIFICATES)) {
    describe(`a certificate that ${name}`, () => {
      let alone: BoundaryFixture;
      let dispatched: BoundaryFixture;
      before(async () => {
        const certificate = make();
        alone = await openFixture(certificate, null);
        dispatched = await openFixture(certificate, null, { wrapJudge: (handler) => handler });
      });
      after(async () => {
        await alone?.close();
        await dispatched?.close();
      });

      test('every event: the same answer and the same record', async () => {
        const seen = new Set<string>();
        for (const event of events) {
          const a = await alone.boundary.decide(structuredClone(event), { source: 'hook' });
          const d = await dispatched.boundary.decide(structuredClone(event), { source: 'hook' });
          const label = `${String(event.type)} ${String(event.id ?? '')}`;
          assert.deepEqual(comparable(a), comparable(d), label);
          assert.deepEqual(
            recordPart(alone.boundary.lastRecord ?? undefined),
            recordPart(dispatched.boundary.lastRecord ?? undefined),
            label,
          );
          seen.add(a.decision);
        }
        // The certificates are chosen so that the comparison covers what each can answer.
        if (name === 'allows, forbids and escalates')
          assert.deepEqual([...seen].sort(), ['allow', 'ask', 'deny']);
        else assert.ok(seen.has('deny'));
      });
    });
  }

  test('the shortcut is taken for clean tool.before events and handed back otherwise', () => {
    const certificate = CERTIFICATES['allows, forbids and escalates']!();
    const context = { certificate, frame: { root: '/repo', cwd: '/repo' }, now: () => new Date() };
    let taken = 0;
    for (const raw of events.filter((e) => e.type === 'tool.before')) {
      const { event, unknownFields } = (() => {
        try {
          return prepareEvent(structuredClone(raw), 'ses_x', new Date());
        } catch {
          return { event: undefined, unknownFields: [] };
        }
      })();
      if (event === undefined) continue;
      const outcome = judgeAlone(context, event, unknownFields.length === 0);
      if (unknownFields.length > 0)
        assert.equal(outcome, undefined, 'an event with unknown fields is dispatched');
      if (outcome !== undefined) taken++;
    }
    assert.ok(taken >= 50, `the shortcut answered ${taken} corpus events`);
    const unknown = prepareEvent(
      { ...toolBefore('Bash', { command: 'ls' }), call: { id: 'c', surprise: true } },
      'ses_x',
      new Date(),
    );
    assert.deepEqual(unknown.unknownFields, ['/call/surprise']);
    assert.equal(judgeAlone(context, unknown.event, false), undefined);
  });
});
