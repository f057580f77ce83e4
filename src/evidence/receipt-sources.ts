/**
 * Side effects reported outside tool calls: `file.changed` events (a harness, `wrap`, the reconcile
 * pass) and Tally's own network events; and the folding of network witnesses into rows.
 */
import {
  changeFacts,
  compareCodeUnits,
  contentDigest,
  countField,
  fileChangedOperation,
  isRecord,
  normalizePath,
  rootFrame,
  sortedUnique,
  stringField,
  type WorkspaceFrame,
} from './normalize.js';
import { agentId, type NetworkWitness } from './receipt-calls.js';
import type { WriteWitness } from './receipt-files.js';
import type { EventRecord } from './record.js';

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
    const operation = isRecord(change) ? fileChangedOperation(change.operation) : undefined;
    if (rawPath === undefined || operation === undefined || !isRecord(change)) continue;
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

/** `dev.tally.network.connect`: `url`, or `host` with an optional `port`. */
export function networkEventWitness(record: EventRecord): NetworkWitness[] {
  const event = record.event;
  const url = stringField(event, 'url');
  const host = stringField(event, 'host');
  if (url === undefined && host === undefined) return [];
  const w: NetworkWitness = { source: record.source, seq: record.seq };
  if (url !== undefined) w.url = url;
  if (host !== undefined) w.host = host.toLowerCase();
  const port = countField(event, 'port');
  if (port !== undefined) w.port = port;
  const agent = agentId(record);
  if (agent !== undefined) w.agent = agent;
  return [w];
}

export interface NetworkRow {
  url?: string;
  host?: string;
  port?: number;
  sources: string[];
  agents: string[];
  seqs: number[];
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

/** One row per URL (or per host and port when no URL was seen). */
export function foldNetwork(witnesses: readonly NetworkWitness[]): NetworkRow[] {
  const groups = new Map<string, { sample: NetworkWitness; members: NetworkWitness[] }>();
  for (const w of witnesses) {
    const key = w.url !== undefined ? `url ${w.url}` : `host ${w.host ?? ''}:${w.port ?? ''}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { sample: w, members: [w] });
    else group.members.push(w);
  }
  const rows: NetworkRow[] = [];
  for (const key of [...groups.keys()].sort(compareCodeUnits)) {
    const { sample, members } = groups.get(key)!;
    const row: NetworkRow = { sources: [], agents: [], seqs: [] };
    if (sample.url !== undefined) row.url = sample.url;
    const host = sample.host ?? (sample.url === undefined ? undefined : hostOf(sample.url));
    if (host !== undefined) row.host = host;
    if (sample.port !== undefined) row.port = sample.port;
    row.sources = sortedUnique(members.map((m) => m.source));
    row.agents = sortedUnique(members.flatMap((m) => m.agent ?? []));
    row.seqs = [...new Set(members.map((m) => m.seq))].sort((a, b) => a - b);
    rows.push(row);
  }
  return rows;
}
