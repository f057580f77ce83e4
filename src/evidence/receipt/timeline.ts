/**
 * The timeline (one compact line per record) and the `unknown` section: event types the receipt does
 * not interpret, and fields of interpreted types it does not know. Both are kept and shown, never
 * dropped.
 */

import { isJsonObject } from '../../core/json.js';
import {
  NETWORK_EVENT_TYPE,
  normalizePath,
  rootFrame,
  stringField,
  truncate,
  type WorkspaceFrame,
} from '../normalize.js';
import type { EventRecord } from '../record/record.js';
import { SEQS_MAX } from './bounds.js';
import { agentId, type CallState, callArgument, identify } from './calls.js';

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
  /** The first `SEQS_MAX` records of the type; `count` says how many there are. */
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
  'tally.reconcile.summary': [],
  'tally.transcript.summary': [],
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
      if (entry.seqs.length < SEQS_MAX) entry.seqs.push(record.seq);
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
  const arg = callArgument(call);
  let target = arg.command ?? arg.url;
  if (target === undefined && arg.path !== undefined) target = normalizePath(arg.path, frame, call.cwd)?.path;
  return target === undefined ? facts.canonical : `${facts.canonical} ${target}`;
}

function fileChangedSummary(event: EventRecord['event'], frame: WorkspaceFrame): string | undefined {
  const changes = Array.isArray(event.changes) ? event.changes : [];
  const first = changes[0];
  const rawPath = stringField(first, 'path');
  if (rawPath === undefined || !isJsonObject(first)) return undefined;
  const path = normalizePath(rawPath, rootFrame(frame), stringField(event.session, 'cwd'))?.path ?? rawPath;
  const more = changes.length > 1 ? ` (+${changes.length - 1} more)` : '';
  return `${String(first.operation)} ${path}${more}`;
}

/**
 * A record's timeline summary, split in two: `text` is the whole summary when the record alone
 * gives it; for the events of a tool call, `suffix` follows the call's own summary, which is only
 * known once every record of the call has been seen.
 */
export type SummaryPart = { text: string | undefined } | { suffix: string };

export function summaryPart(record: EventRecord, frame: WorkspaceFrame): SummaryPart {
  const event = record.event;
  switch (event.type) {
    case 'session.start':
      return {
        text: [
          stringField(event.harness, 'name'),
          stringField(event.harness, 'version'),
          stringField(event, 'trigger'),
        ]
          .filter((s) => s !== undefined)
          .join(' '),
      };
    case 'session.end':
      return { text: `${stringField(event, 'outcome') ?? 'unknown'}: ${stringField(event, 'reason') ?? ''}` };
    case 'tool.before':
    case 'tool.permission.request':
    case 'tool.progress':
      return { suffix: '' };
    case 'tool.after':
      return { suffix: ` → ${stringField(event, 'outcome') ?? '?'}` };
    case 'tool.permission.resolved':
      return {
        suffix: ` → ${stringField(event, 'decision') ?? '?'} by ${stringField(event, 'decidedBy') ?? '?'}`,
      };
    case 'tool.batch.after':
      return { text: `${Array.isArray(event.calls) ? event.calls.length : 0} calls` };
    case 'file.changed':
      return { text: fileChangedSummary(event, frame) };
    case 'model.request.before':
    case 'model.response.after':
    case 'model.error':
      return { text: stringField(event.model, 'id') };
    case 'model.switch.after':
      return {
        text: `${stringField(event.previous, 'id') ?? '?'} → ${stringField(event.current, 'id') ?? '?'}`,
      };
    case NETWORK_EVENT_TYPE:
      return { text: stringField(event, 'url') ?? stringField(event, 'host') };
  }
  return { text: undefined };
}

/** A timeline entry waiting for its call's summary (see `SummaryPart`). */
export interface PendingEntry {
  entry: TimelineEntry;
  part: SummaryPart;
  /** The call the record belongs to, for call summaries. */
  call?: CallState;
}

export function pendingEntry(record: EventRecord, frame: WorkspaceFrame, call?: CallState): PendingEntry {
  const entry: TimelineEntry = {
    seq: record.seq,
    time: record.time,
    type: record.event.type,
    source: record.source,
  };
  const agent = agentId(record);
  if (agent !== undefined) entry.agent = agent;
  if (record.decision !== undefined) entry.decision = record.decision.decision;
  const pending: PendingEntry = { entry, part: summaryPart(record, frame) };
  if (call !== undefined) pending.call = call;
  return pending;
}

/** The finished entry, once the call (if any) is known. Fields are set in the receipt's key order. */
export function resolveEntry(pending: PendingEntry, frame: WorkspaceFrame): TimelineEntry {
  const { entry, part } = pending;
  const text = 'text' in part ? part.text : `${callSummary(pending.call, frame)}${part.suffix}`;
  const out: TimelineEntry = { seq: entry.seq, time: entry.time, type: entry.type, source: entry.source };
  if (entry.agent !== undefined) out.agent = entry.agent;
  if (text !== undefined && text !== '') out.summary = truncate(text, SUMMARY_MAX);
  if (entry.decision !== undefined) out.decision = entry.decision;
  return out;
}

/**
 * The timeline keeps the first `TIMELINE_HEAD` and the last `TIMELINE_TAIL` records; a longer
 * session's receipt says which records it left out (`timeline_omitted`). Every record stays in the
 * package, signed; only the receipt's summary of them is bounded (docs/receipt.md#timeline).
 */
export const TIMELINE_HEAD = 5000;
export const TIMELINE_TAIL = 5000;

export interface TimelineOmitted {
  count: number;
  first_seq: number;
  last_seq: number;
}

export class TimelineWindow {
  readonly head: PendingEntry[] = [];
  private readonly ring: PendingEntry[] = [];
  private next = 0;
  private seen = 0;

  add(pending: PendingEntry): void {
    this.seen++;
    if (this.head.length < TIMELINE_HEAD) {
      this.head.push(pending);
      return;
    }
    if (this.ring.length < TIMELINE_TAIL) this.ring.push(pending);
    else this.ring[this.next] = pending;
    this.next = (this.next + 1) % TIMELINE_TAIL;
  }

  /** Kept entries in record order. */
  entries(): PendingEntry[] {
    if (this.ring.length < TIMELINE_TAIL) return [...this.head, ...this.ring];
    return [...this.head, ...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  omitted(): TimelineOmitted | undefined {
    const count = this.seen - this.head.length - this.ring.length;
    if (count === 0) return undefined;
    return { count, first_seq: TIMELINE_HEAD, last_seq: TIMELINE_HEAD + count - 1 };
  }
}
