/**
 * The last bound of a receipt: it fits the seal line. Every section but the four shared lists
 * (./row-share.ts) is bounded by count, not by bytes, and some rows carry names the agent chose —
 * an unknown field's name, an event type, a tool or agent name, any length — so a few hook events
 * naming thousands of 4 KB fields made a receipt no seal line could hold, and the close failed at
 * every try. A receipt past `RECEIPT_BYTES` has whole sections emptied, least needed first, until
 * it fits, and names them in `sections_omitted`; verification then fails `receipt_complete`. It
 * depends only on the records, like everything the composer does.
 */
import { jsonBytesWithin } from '../../core/json-budget.js';

/** What of a receipt (./receipt.ts) the fit may give up. */
interface Sections {
  unknown: unknown;
  timeline: unknown[];
  timeline_omitted?: unknown;
  counts: { events_by_type: unknown };
  agent_graph: { agents: unknown[]; roots: unknown[] };
  decisions: unknown[];
  decisions_omitted?: unknown;
  processes: unknown[];
  processes_omitted?: unknown;
  tool_calls: unknown[];
  network: unknown[];
  files_read: unknown[];
  session: { harness_sessions: unknown[]; baseline?: unknown; since?: unknown };
  sections_omitted?: string[];
}

/** The JSON a seal's receipt may take: base64 of it, with the seal's other fields, fits 64 MiB. */
export const RECEIPT_BYTES = 46 * 1024 * 1024;

/** Sections a receipt gives up to fit, in that order, each emptied as a whole. */
const SECTIONS: ReadonlyArray<readonly [string, (r: Sections) => void]> = [
  ['unknown', (r) => Object.assign(r, { unknown: { types: [], fields: [] } })],
  [
    'timeline',
    (r) => {
      r.timeline = [];
      delete r.timeline_omitted;
    },
  ],
  ['counts.events_by_type', (r) => Object.assign(r.counts, { events_by_type: {} })],
  ['agent_graph', (r) => Object.assign(r.agent_graph, { agents: [], roots: [] })],
  [
    'decisions',
    (r) => {
      r.decisions = [];
      delete r.decisions_omitted;
    },
  ],
  [
    'processes',
    (r) => {
      r.processes = [];
      delete r.processes_omitted;
    },
  ],
  ['tool_calls', (r) => Object.assign(r, { tool_calls: [] })],
  ['network', (r) => Object.assign(r, { network: [] })],
  ['files_read', (r) => Object.assign(r, { files_read: [] })],
  ['session.harness_sessions', (r) => Object.assign(r.session, { harness_sessions: [] })],
  ['session.baseline', (r) => delete r.session.baseline],
  ['session.since', (r) => delete r.session.since],
];

/** `receipt` itself when it fits; else with sections emptied until it does (`sections_omitted`). */
export function fitReceipt<R extends Sections>(receipt: R, limit = RECEIPT_BYTES): R {
  if (jsonBytesWithin(receipt, limit) <= limit) return receipt;
  const omitted: string[] = [];
  for (const [name, empty] of SECTIONS) {
    empty(receipt);
    omitted.push(name);
    receipt.sections_omitted = omitted;
    if (jsonBytesWithin(receipt, limit) <= limit) break;
  }
  return receipt;
}
