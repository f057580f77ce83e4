/**
 * Receiver-side task and workspace lineage (spec page task-workspace-lineage.md, "Lineage and
 * actual changes"). A message can be valid against every schema and still be refused here,
 * because some rules relate an event to the events the receiver has already accepted.
 *
 * Event identity is `(source, id)`; `parentEventId` names an event of the same source. Refused:
 * - `lineage.cycle`: the parent chain comes back to the event itself (its own id, or through
 *   remembered events, including a parent that arrives after its child);
 * - `lineage.proposal`: a `task.change.after` whose remembered parent is a `task.change.before`
 *   of another task id or operation, or a `workspace.change.after` whose remembered parent is a
 *   `workspace.change.before` of another kind, in either arrival order. Proposed and applied
 *   values are never compared: partial application and modification may differ legitimately;
 * - `lineage.no-op`: an actual change that changes nothing (an `update` task after with an empty
 *   `change`, or whose every changed field equals `prior`; a workspace after whose `change`
 *   equals `prior`; a `file.changed` update whose `before` equals its `after`);
 * - `lineage.identity`: a remembered identity reused with another type, parent or task id.
 *
 * A parent the receiver never saw is legal: a filtered subscriber need not receive ancestors,
 * and must not fetch them. Nothing is inferred from timestamps.
 *
 * Memory is bounded: at most `maxEventsPerSource` events per source (the oldest is forgotten
 * first) and `maxSources` sources (the least recently used is forgotten first). A forgotten
 * event is as if never received: its children are judged as those of an unknown parent.
 */

import { isDeepStrictEqual } from 'node:util';
import { isJsonObject } from '../../core/json.js';
import type { Issue } from '../registration/types.js';

/** Events remembered per source; a kit serves one harness, whose recent events are what relate. */
export const MAX_LINEAGE_EVENTS_PER_SOURCE = 4096;
/** Sources remembered at once; a source that is not in use any more is forgotten first. */
export const MAX_LINEAGE_SOURCES = 32;

export interface LineageOptions {
  maxEventsPerSource?: number;
  maxSources?: number;
}

/** What is kept of one accepted event: what identity, cycle and proposal rules compare. */
interface Known {
  type: string;
  parent: string | undefined;
  /** `task.id` and `task.operation` of a task change. */
  task?: { id: unknown; operation: unknown };
  /** `workspace.kind` of a workspace change. */
  kind?: unknown;
}

interface SourceMemory {
  events: Map<string, Known>;
  /**
   * Remembered ids in arrival order from `head`: the oldest is forgotten first. A queue of its own,
   * because finding a Map's first key after many deletions from its front skips every deleted
   * entry still held, which made each eviction cost more the longer a source ran.
   */
  order: string[];
  head: number;
  /** Parent id -> ids of remembered events naming it, for parents that arrive late. */
  children: Map<string, Set<string>>;
}

type Event = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function summary(event: Event): Known {
  const type = String(event.type);
  const known: Known = { type, parent: text(event.parentEventId) };
  if (type.startsWith('task.change.') && isJsonObject(event.task)) {
    known.task = { id: event.task.id, operation: event.task.operation };
  }
  if (type.startsWith('workspace.change.') && isJsonObject(event.workspace))
    known.kind = event.workspace.kind;
  return known;
}

/** An event's identity `(source, id)` and what is kept of it; undefined without both. */
interface Described {
  source: string;
  id: string;
  self: Known;
}

function describe(event: Event): Described | undefined {
  const source = text(event.source);
  const id = text(event.id);
  return source === undefined || id === undefined ? undefined : { source, id, self: summary(event) };
}

/** True when every field of `change` is in `prior` with an equal value (vacuously, when empty). */
function unchanged(change: Record<string, unknown>, prior: Record<string, unknown>): boolean {
  return Object.entries(change).every(
    ([key, value]) => Object.hasOwn(prior, key) && isDeepStrictEqual(prior[key], value),
  );
}

/** The stateless rule: an actual change must change something. */
function noOpIssues(event: Event, base: string, out: Issue[]): void {
  const noOp = (pointer: string, message: string) => out.push({ pointer, rule: 'lineage.no-op', message });
  if (event.type === 'task.change.after' && isJsonObject(event.task) && event.task.operation === 'update') {
    const { change, prior } = event.task;
    if (!isJsonObject(change)) return;
    if (Object.keys(change).length === 0) {
      noOp(`${base}/task/change`, 'an actual task update names the fields it changed');
    } else if (isJsonObject(prior) && unchanged(change, prior)) {
      noOp(`${base}/task/change`, 'every changed field equals its prior value: the update changed nothing');
    }
  }
  if (event.type === 'workspace.change.after' && isJsonObject(event.workspace)) {
    const { change, prior } = event.workspace;
    if (isJsonObject(change) && isJsonObject(prior) && unchanged(change, prior)) {
      noOp(`${base}/workspace/change`, 'the workspace change equals its prior value: nothing changed');
    }
  }
  if (event.type === 'file.changed' && Array.isArray(event.changes)) {
    event.changes.forEach((change, i) => {
      if (
        isJsonObject(change) &&
        change.operation === 'update' &&
        Object.hasOwn(change, 'before') &&
        Object.hasOwn(change, 'after') &&
        isDeepStrictEqual(change.before, change.after)
      ) {
        noOp(`${base}/changes/${i}/after`, 'an update whose after equals its before changed nothing');
      }
    });
  }
}

/**
 * Issues of a proposal `before` and its actual change `after`, one of them the event being
 * checked (the pointers go into it) and `describe` naming the other, already remembered.
 */
function pairIssues(before: Known, after: Known, base: string, describe: string, out: Issue[]): void {
  const mismatch = (field: string, message: string) =>
    out.push({ pointer: `${base}/${field}`, rule: 'lineage.proposal', message: `${message} ${describe}` });
  if (before.type === 'task.change.before' && after.type === 'task.change.after') {
    if (before.task?.id !== after.task?.id) mismatch('task/id', 'task id differs from');
    if (before.task?.operation !== after.task?.operation)
      mismatch('task/operation', 'operation differs from');
  }
  if (before.type === 'workspace.change.before' && after.type === 'workspace.change.after') {
    if (before.kind !== after.kind) mismatch('workspace/kind', 'workspace kind differs from');
  }
}

/** Remembers accepted events per source and judges new ones against them (one receiver). */
export class LineageTracker {
  readonly maxEventsPerSource: number;
  readonly maxSources: number;
  /** In order of last use, so the first key is the least recently used source. */
  private readonly sources = new Map<string, SourceMemory>();
  /** The source of the last recorded event: already last in `sources`, no reordering needed. */
  private lastSource: string | undefined;

  constructor(options: LineageOptions = {}) {
    this.maxEventsPerSource = options.maxEventsPerSource ?? MAX_LINEAGE_EVENTS_PER_SOURCE;
    this.maxSources = options.maxSources ?? MAX_LINEAGE_SOURCES;
    for (const [name, value] of [
      ['maxEventsPerSource', this.maxEventsPerSource],
      ['maxSources', this.maxSources],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be an integer ≥ 1`);
    }
  }

  /**
   * The lineage issues of `event` (a `params.event` that already passed the message validator)
   * against what this tracker remembers; pointers start at `base`. Changes nothing.
   */
  check(event: Event, base = '/params/event'): Issue[] {
    return this.inspect(event, base).issues;
  }

  /** `check`'s work, also handing back what `remember` keeps of the event, so `accept` reads it once. */
  private inspect(event: Event, base: string): { issues: Issue[]; described?: Described } {
    const out: Issue[] = [];
    noOpIssues(event, base, out);
    const described = describe(event);
    if (described === undefined) return { issues: out };
    this.judge(described, base, out);
    return { issues: out, described };
  }

  private judge({ source, id, self }: Described, base: string, out: Issue[]): void {
    const parentPointer = `${base}/parentEventId`;
    if (self.parent === id) {
      out.push({
        pointer: parentPointer,
        rule: 'lineage.cycle',
        message: 'an event cannot be its own parent',
      });
    }
    const memory = this.sources.get(source);
    if (memory === undefined) return;
    const known = memory.events.get(id);
    if (known !== undefined) {
      // A repeat (a retry, or another subscription's view): identity and parentage are
      // invariant; its relations were judged when it was first accepted.
      const reused = (field: string, what: string) =>
        out.push({
          pointer: `${base}/${field}`,
          rule: 'lineage.identity',
          message: `event ${JSON.stringify(id)} was already received with another ${what}`,
        });
      if (known.type !== self.type) reused('type', 'type');
      if (known.parent !== self.parent) reused('parentEventId', 'parent');
      if (known.task !== undefined && self.task !== undefined && known.task.id !== self.task.id)
        reused('task/id', 'task');
      return;
    }
    if (self.parent !== undefined && self.parent !== id) {
      const seen = new Set([id]);
      for (let cursor: string | undefined = self.parent; cursor !== undefined; ) {
        if (seen.has(cursor)) {
          out.push({
            pointer: parentPointer,
            rule: 'lineage.cycle',
            message: `the parent chain through ${JSON.stringify(self.parent)} comes back to this event`,
          });
          break;
        }
        seen.add(cursor);
        cursor = memory.events.get(cursor)?.parent;
      }
      const parent = memory.events.get(self.parent);
      if (parent !== undefined) {
        pairIssues(parent, self, base, `the parent proposal ${JSON.stringify(self.parent)}`, out);
      }
    }
    // A parent may arrive after its children: judge it against them too.
    for (const child of memory.children.get(id) ?? []) {
      const after = memory.events.get(child);
      if (after !== undefined)
        pairIssues(self, after, base, `its actual change ${JSON.stringify(child)}`, out);
    }
  }

  /** Remembers an accepted event. A repeat of a remembered identity changes nothing. */
  record(event: Event): void {
    const described = describe(event);
    if (described !== undefined) this.remember(described);
  }

  private remember({ source, id, self: known }: Described): void {
    let memory = this.sources.get(source);
    if (memory === undefined) {
      memory = { events: new Map(), children: new Map(), order: [], head: 0 };
      if (this.sources.size >= this.maxSources) this.sources.delete(this.sources.keys().next().value!);
      this.sources.set(source, memory);
    } else if (this.lastSource !== source) {
      this.sources.delete(source);
      this.sources.set(source, memory);
    }
    this.lastSource = source;
    if (memory.events.has(id)) return;
    memory.events.set(id, known);
    memory.order.push(id);
    if (known.parent !== undefined) {
      const siblings = memory.children.get(known.parent);
      if (siblings === undefined) memory.children.set(known.parent, new Set([id]));
      else siblings.add(id);
    }
    if (memory.events.size > this.maxEventsPerSource) this.forgetOldest(memory);
  }

  /** `check`, then `record` when it found nothing: the issues, empty when accepted. */
  accept(event: Event, base = '/params/event'): Issue[] {
    const { issues, described } = this.inspect(event, base);
    if (issues.length === 0 && described !== undefined) this.remember(described);
    return issues;
  }

  /** Whether the event `(source, id)` is remembered. */
  knows(source: string, id: string): boolean {
    return this.sources.get(source)?.events.has(id) ?? false;
  }

  private forgetOldest(memory: SourceMemory): void {
    const id = memory.order[memory.head++] as string;
    // Compact the queue once its forgotten front outweighs the rest.
    if (memory.head > 1024 && memory.head * 2 > memory.order.length) {
      memory.order = memory.order.slice(memory.head);
      memory.head = 0;
    }
    const parent = memory.events.get(id)?.parent;
    memory.events.delete(id);
    if (parent === undefined) return;
    const siblings = memory.children.get(parent);
    siblings?.delete(id);
    if (siblings?.size === 0) memory.children.delete(parent);
  }
}
