/** Hand-built record lists for the receipt tests. */
import { readFileSync } from 'node:fs';
import type {
  AgentAttribution,
  CanonicalEvent,
  EventRecord,
  PolicyDecision,
} from '../../src/evidence/record/record.js';

const FIXTURES = new URL('../../../../shared/ahp/fixtures/draft/http/', import.meta.url);

export const ROOT_HEX = 'ab'.repeat(32);

/** `params.event` of an official AHP fixture. */
export function fixtureEvent(name: string): CanonicalEvent {
  const message = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as {
    params: { event: CanonicalEvent };
  };
  return message.params.event;
}

export interface RecordOptions {
  source?: string;
  agent?: AgentAttribution;
  decision?: PolicyDecision;
}

/** Builds records in order: seq = position, time = one second apart. */
export class RecordList {
  readonly records: EventRecord[] = [];
  private eventIds = 0;

  add(
    event: Omit<CanonicalEvent, 'id' | 'time' | 'source'> & Partial<CanonicalEvent>,
    options: RecordOptions = {},
  ): this {
    const seq = this.records.length;
    const time = new Date(Date.UTC(2026, 0, 2, 3, 4, seq)).toISOString();
    const full = {
      id: `evt_${++this.eventIds}`,
      time,
      source: 'urn:test:harness',
      ...event,
    } as CanonicalEvent;
    const record: EventRecord = {
      v: 2,
      seq,
      time,
      session: 'ssn_test',
      source: options.source ?? 'hook',
      event: full,
      prev: seq === 0 ? null : `sha256:${'0'.repeat(64)}`,
    };
    if (options.agent !== undefined) record.agent = options.agent;
    if (options.decision !== undefined) record.decision = options.decision;
    this.records.push(record);
    return this;
  }

  start(root = '/repo', extra: Record<string, unknown> = {}): this {
    return this.add({
      type: 'session.start',
      session: { id: 'harness_s1', cwd: root, workspaceRoots: [root] },
      trigger: 'startup',
      harness: { name: 'example', version: '1.0' },
      permissionMode: 'default',
      manifest: {},
      items: [],
      ...extra,
    });
  }

  toolBefore(
    callId: string,
    name: string,
    input: Record<string, unknown>,
    options: RecordOptions = {},
  ): this {
    return this.add(
      { type: 'tool.before', call: { id: callId }, tool: { name, input, origin: 'native' }, path: 'native' },
      options,
    );
  }

  toolAfter(
    callId: string,
    name: string,
    input: Record<string, unknown>,
    outcome: 'ok' | 'error' | 'denied',
    options: RecordOptions & { extra?: Record<string, unknown> } = {},
  ): this {
    const execution = outcome === 'denied' ? { status: 'skipped', reason: 'policy' } : { status: 'executed' };
    const error = outcome === 'error' ? { error: { class: 'operation', message: 'failed' } } : {};
    return this.add(
      {
        type: 'tool.after',
        call: { id: callId },
        tool: { name, input, origin: 'native' },
        path: 'native',
        outcome,
        execution,
        items: [],
        ...error,
        ...(options.extra ?? {}),
      },
      options,
    );
  }

  fileChanged(
    changes: Record<string, unknown>[],
    options: RecordOptions = {},
    extensions?: Record<string, unknown>,
  ): this {
    return this.add(
      { type: 'file.changed', changes, ...(extensions === undefined ? {} : { extensions }) },
      options,
    );
  }

  end(outcome = 'completed', reason = 'user exit'): this {
    return this.add({ type: 'session.end', session: { id: 'harness_s1' }, outcome, reason });
  }
}
