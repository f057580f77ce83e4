/**
 * The timeline (one compact line per record) and the `unknown` section: event types the receipt does
 * not interpret, and fields of interpreted types it does not know. Both are kept and shown, never
 * dropped.
 */

import { toolArgument } from './aliases.js';
import {
  isRecord,
  NETWORK_EVENT_TYPE,
  normalizePath,
  rootFrame,
  stringField,
  truncate,
  type WorkspaceFrame,
} from './normalize.js';
import { agentId, type CallState, identify } from './receipt-calls.js';
import type { EventRecord } from './record.js';

export interface TimelineEntry {
  seq: number;
  time: string;
  type: string;
  source: string;
  agent?: string;
  summary?: string;
  decision?: 'allow' | 'deny' | 'ask';
}

export interface UnknownType {
  type: string;
  count: number;
  seqs: number[];
}

export interface UnknownField {
  type: string;
  field: string;
  count: number;
  first_seq: number;
}

export interface UnknownSection {
  types: UnknownType[];
  fields: UnknownField[];
}

const SUMMARY_MAX = 160;

const ENVELOPE = [
  'id',
  'source',
  'type',
  'time',
  'session',
  'parentEventId',
  'turn',
  'items',
  'gaps',
  'native',
  'extensions',
  'synthesized',
];
const TOOL = ['call', 'tool', 'path', 'batch'];
const MODEL = ['model', 'attempt', 'execution', 'usage', 'latencyMs'];

/** The event types the receipt interprets, with the payload fields it knows for each (AHP draft schemas). */
const INTERPRETED: Readonly<Record<string, readonly string[]>> = {
  'session.start': ['trigger', 'resumedFrom', 'permissionMode', 'harness', 'manifest'],
  'session.end': ['outcome', 'reason', 'counters'],
  'tool.before': TOOL,
  'tool.after': [...TOOL, 'outcome', 'execution', 'error', 'durationMs', 'fileChanges'],
  'tool.permission.request': [...TOOL, 'suggestions', 'sandboxBypass'],
  'tool.permission.resolved': [...TOOL, 'decision', 'decidedBy'],
  'tool.progress': [...TOOL, 'partialOutput', 'backgrounded'],
  'tool.batch.after': ['batch', 'calls'],
  'file.changed': ['changes'],
  'model.request.before': ['model', 'attempt', 'params'],
  'model.response.after': [...MODEL, 'finishReason'],
  'model.error': [...MODEL, 'error', 'recovery'],
  'model.switch.after': ['previous', 'current', 'reason'],
  [NETWORK_EVENT_TYPE]: ['url', 'host', 'port', 'protocol'],
};

export function isInterpreted(type: string): boolean {
  return Object.hasOwn(INTERPRETED, type);
}

export class UnknownCollector {
  private readonly types = new Map<string, UnknownType>();
  private readonly fields = new Map<string, UnknownField>();

  add(record: EventRecord): void {
    const event = record.event;
    if (!isInterpreted(event.type)) {
      const entry = this.types.get(event.type) ?? { type: event.type, count: 0, seqs: [] };
      entry.count++;
      entry.seqs.push(record.seq);
      this.types.set(event.type, entry);
      return;
    }
    const known = INTERPRETED[event.type]!;
    for (const field of Object.keys(event)) {
      if (ENVELOPE.includes(field) || known.includes(field)) continue;
      const key = JSON.stringify([event.type, field]);
      const entry = this.fields.get(key) ?? { type: event.type, field, count: 0, first_seq: record.seq };
      entry.count++;
      this.fields.set(key, entry);
    }
  }

  build(compare: (a: string, b: string) => number): UnknownSection {
    return {
      types: [...this.types.values()].sort((a, b) => compare(a.type, b.type)),
      fields: [...this.fields.values()].sort((a, b) => compare(a.type, b.type) || compare(a.field, b.field)),
    };
  }
}

function callSummary(call: CallState | undefined, frame: WorkspaceFrame): string {
  if (call === undefined) return '(no call)';
  const facts = identify(call);
  const arg = toolArgument(call.mcpToolName ?? facts.native, call.input, call.kindHint);
  let target = arg.command ?? arg.url;
  if (target === undefined && arg.path !== undefined) target = normalizePath(arg.path, frame, call.cwd)?.path;
  return target === undefined ? facts.canonical : `${facts.canonical} ${target}`;
}

function fileChangedSummary(event: EventRecord['event'], frame: WorkspaceFrame): string | undefined {
  const changes = Array.isArray(event.changes) ? event.changes : [];
  const first = changes[0];
  const rawPath = stringField(first, 'path');
  if (rawPath === undefined || !isRecord(first)) return undefined;
  const path = normalizePath(rawPath, rootFrame(frame), stringField(event.session, 'cwd'))?.path ?? rawPath;
  const more = changes.length > 1 ? ` (+${changes.length - 1} more)` : '';
  return `${String(first.operation)} ${path}${more}`;
}

/** A short human line per record; deterministic, derived only from the record. */
export function summarize(
  record: EventRecord,
  call: CallState | undefined,
  frame: WorkspaceFrame,
): string | undefined {
  const event = record.event;
  let text: string | undefined;
  switch (event.type) {
    case 'session.start':
      text = [
        stringField(event.harness, 'name'),
        stringField(event.harness, 'version'),
        stringField(event, 'trigger'),
      ]
        .filter((s) => s !== undefined)
        .join(' ');
      break;
    case 'session.end':
      text = `${stringField(event, 'outcome') ?? 'unknown'}: ${stringField(event, 'reason') ?? ''}`;
      break;
    case 'tool.before':
    case 'tool.permission.request':
    case 'tool.progress':
      text = callSummary(call, frame);
      break;
    case 'tool.after':
      text = `${callSummary(call, frame)} → ${stringField(event, 'outcome') ?? '?'}`;
      break;
    case 'tool.permission.resolved':
      text = `${callSummary(call, frame)} → ${stringField(event, 'decision') ?? '?'} by ${stringField(event, 'decidedBy') ?? '?'}`;
      break;
    case 'tool.batch.after':
      text = `${Array.isArray(event.calls) ? event.calls.length : 0} calls`;
      break;
    case 'file.changed':
      text = fileChangedSummary(event, frame);
      break;
    case 'model.request.before':
    case 'model.response.after':
    case 'model.error':
      text = stringField(event.model, 'id');
      break;
    case 'model.switch.after':
      text = `${stringField(event.previous, 'id') ?? '?'} → ${stringField(event.current, 'id') ?? '?'}`;
      break;
    case NETWORK_EVENT_TYPE:
      text = stringField(event, 'url') ?? stringField(event, 'host');
      break;
  }
  return text === undefined || text === '' ? undefined : truncate(text, SUMMARY_MAX);
}

export function timelineEntry(
  record: EventRecord,
  call: CallState | undefined,
  frame: WorkspaceFrame,
): TimelineEntry {
  const entry: TimelineEntry = {
    seq: record.seq,
    time: record.time,
    type: record.event.type,
    source: record.source,
  };
  const agent = agentId(record);
  if (agent !== undefined) entry.agent = agent;
  const summary = summarize(record, call, frame);
  if (summary !== undefined) entry.summary = summary;
  if (record.decision !== undefined) entry.decision = record.decision.decision;
  return entry;
}
