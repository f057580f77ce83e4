/**
 * Side effects reported outside tool calls: `file.changed` events (a harness, `wrap`, the reconcile
 * pass) and Tally's own network events; and the folding of network witnesses into rows.
 */
import { isDigest } from '../../core/hash.js';
import { isJsonObject } from '../../core/json.js';
import {
  changeFacts,
  compareCodeUnits,
  contentDigest,
  countField,
  fileChangedOperation,
  normalizePath,
  rootFrame,
  sortedUnique,
  stringField,
  type WorkspaceFrame,
} from '../normalize.js';
import type { EventRecord } from '../record/record.js';
import { seqFields, Witnesses, type WitnessSet } from './bounds.js';
import { agentId } from './calls.js';
import type { WriteWitness } from './files.js';

/**
 * One definite write witness per change. A change that names a rename source
 * (`extensions["dev.tally.changes"][path].from`) is a rename; the `remove` of that source path in
 * the same event is the other half of the rename, not a separate deletion.
 */
export function fileChangedWitnesses(record: EventRecord, frame: WorkspaceFrame): WriteWitness[] {
  const event = record.event;
  const changes = Array.isArray(event.changes) ? event.changes : [];
  const cwd = stringField(event.session, 'cwd');
  const agent = agentId(record);
  const out: WriteWitness[] = [];
  const renamedFrom = new Set<string>();
  for (const change of changes) {
    const rawPath = stringField(change, 'path');
    const operation = isJsonObject(change) ? fileChangedOperation(change.operation) : undefined;
    if (rawPath === undefined || operation === undefined || !isJsonObject(change)) continue;
    const normal = normalizePath(rawPath, rootFrame(frame), cwd);
    if (normal === undefined) continue;
    const facts = changeFacts(event, rawPath);
    const w: WriteWitness = { ...normal, operation, definite: true, source: record.source, seq: record.seq };
    if (agent !== undefined) w.agent = agent;
    if (facts.from !== undefined) {
      const from = normalizePath(facts.from, rootFrame(frame), cwd);
      if (from !== undefined) {
        w.operation = 'renamed';
        w.from = from.path;
        renamedFrom.add(from.path);
      }
    }
    const before = facts.before ?? contentDigest(change.before);
    if (before !== undefined) w.before = before;
    const after = facts.after ?? contentDigest(change.after);
    if (after !== undefined) w.after = after;
    if (facts.additions !== undefined) w.additions = facts.additions;
    if (facts.deletions !== undefined) w.deletions = facts.deletions;
    if (typeof change.agentCaused === 'boolean') w.agentCaused = change.agentCaused;
    out.push(w);
  }
  return out.filter((w) => !(w.operation === 'deleted' && renamedFrom.has(w.path)));
}

const NET_OPERATIONS: ReadonlySet<string> = new Set(['created', 'modified', 'deleted', 'renamed']);

/**
 * The paths a reconcile pass corroborated (`extensions["dev.tally.reconcile"].corroborated` of its
 * summary, and of the records that hold what the summary's share did not): it saw them too, with
 * their net operation, so they are witnesses of its source like its own reports. Which of those
 * records count is reconcile-parts.ts's to say.
 */
export function reconcileSummaryWitnesses(record: EventRecord, frame: WorkspaceFrame): WriteWitness[] {
  const extensions = record.event.extensions;
  const summary = isJsonObject(extensions) ? extensions['dev.tally.reconcile'] : undefined;
  const entries = isJsonObject(summary) && Array.isArray(summary.corroborated) ? summary.corroborated : [];
  const out: WriteWitness[] = [];
  for (const entry of entries) {
    const rawPath = stringField(entry, 'path');
    const operation = stringField(entry, 'operation');
    if (rawPath === undefined || operation === undefined || !NET_OPERATIONS.has(operation)) continue;
    const normal = normalizePath(rawPath, rootFrame(frame), undefined);
    if (normal === undefined) continue;
    const w: WriteWitness = {
      ...normal,
      operation: operation as WriteWitness['operation'],
      definite: true,
      source: record.source,
      seq: record.seq,
    };
    const rawFrom = stringField(entry, 'from');
    const from = rawFrom === undefined ? undefined : normalizePath(rawFrom, rootFrame(frame), undefined);
    if (operation === 'renamed' && from === undefined) continue;
    if (from !== undefined) w.from = from.path;
    const after = isJsonObject(entry) ? entry.after : undefined;
    if (isDigest(after)) w.after = after;
    out.push(w);
  }
  return out;
}

/** A destination seen outside a tool call (`dev.tally.network.connect`). */
export interface NetworkEvent {
  url?: string;
  host?: string;
  port?: number;
}

/** `dev.tally.network.connect`: `url`, or `host` with an optional `port`. */
export function networkEvent(record: EventRecord): NetworkEvent | undefined {
  const event = record.event;
  const url = stringField(event, 'url');
  const host = stringField(event, 'host');
  if (url === undefined && host === undefined) return undefined;
  const out: NetworkEvent = {};
  if (url !== undefined) out.url = url;
  if (host !== undefined) out.host = host.toLowerCase();
  const port = countField(event, 'port');
  if (port !== undefined) out.port = port;
  return out;
}

export interface NetworkRow {
  url?: string;
  host?: string;
  port?: number;
  sources: string[];
  agents: string[];
  /** At most `SEQS_MAX` (docs/receipt.md#bounds); `seq_count` is present when there are more. */
  seqs: number[];
  seq_count?: number;
}

/** The host of a URL by the WHATWG parser (lower-cased, IDNA-mapped), or undefined if unparseable. */
function hostOf(url: string): string | undefined {
  try {
    const host = new URL(url).hostname;
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

interface NetworkGroup {
  url?: string;
  host?: string;
  port?: number;
  /** True once a network event named the destination: its host and port are the row's. */
  fromEvent: boolean;
  w: Witnesses;
}

/**
 * `network`: one row per URL (or per host and port when no URL was seen). A row's host and port
 * come from the first network event that named it, else from its URL.
 */
export class NetworkLedger {
  private readonly groups = new Map<string, NetworkGroup>();

  private group(key: string): NetworkGroup {
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { fromEvent: false, w: new Witnesses() };
      this.groups.set(key, group);
    }
    return group;
  }

  /** A network event, in record order. */
  addEvent(event: NetworkEvent, record: EventRecord): void {
    const key = event.url !== undefined ? `url ${event.url}` : `host ${event.host ?? ''}:${event.port ?? ''}`;
    const group = this.group(key);
    if (!group.fromEvent) {
      group.fromEvent = true;
      delete group.host;
      delete group.port;
      if (event.url !== undefined) group.url = event.url;
      if (event.host !== undefined) group.host = event.host;
      if (event.port !== undefined) group.port = event.port;
    }
    group.w.add(record.seq, record.source, agentId(record));
  }

  /** A URL a fetch tool call fetched. */
  addFetch(url: string, witnesses: WitnessSet): void {
    const group = this.group(`url ${url}`);
    group.url = url;
    group.w.join(witnesses);
  }

  build(): NetworkRow[] {
    const rows: NetworkRow[] = [];
    for (const key of [...this.groups.keys()].sort(compareCodeUnits)) {
      const group = this.groups.get(key)!;
      const row: NetworkRow = { sources: [], agents: [], seqs: [] };
      if (group.url !== undefined) row.url = group.url;
      const host = group.host ?? (group.url === undefined ? undefined : hostOf(group.url));
      if (host !== undefined) row.host = host;
      if (group.port !== undefined) row.port = group.port;
      row.sources = sortedUnique(group.w.sources);
      row.agents = sortedUnique(group.w.agents);
      Object.assign(row, seqFields(group.w.seqs));
      rows.push(row);
    }
    return rows;
  }
}
