/**
 * Rows of the receipt built from the finished call table: one per tool, one per process, and the
 * counters every section shares.
 */
import { compareCodeUnits, sortedUnique } from './normalize.js';
import type { ToolCallRow } from './receipt.js';
import {
  type CallState,
  type CallTable,
  type DecisionRow,
  identify,
  notRunReason,
  type ProcessRow,
  type Promotions,
  type ToolIdentityFacts,
  type Verdict,
} from './receipt-calls.js';

/** Counts as an object whose keys are in code-unit order (canonical JSON sorts them again anyway). */
export function sortedCounts(counts: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries([...counts.entries()].sort((a, b) => compareCodeUnits(a[0], b[0])));
}

export function tally(keys: Iterable<string>): Record<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return sortedCounts(counts);
}

export function verdicts(rows: readonly DecisionRow[]): Record<Verdict, number> {
  const out: Record<Verdict, number> = { allow: 0, ask: 0, deny: 0 };
  for (const row of rows) out[row.decision]++;
  return out;
}

export function toolCallRows(table: CallTable): ToolCallRow[] {
  const groups = new Map<string, { calls: ToolIdentityFacts[]; states: CallState[] }>();
  for (const call of table.calls.values()) {
    const facts = identify(call);
    const group = groups.get(facts.canonical) ?? { calls: [], states: [] };
    group.calls.push(facts);
    group.states.push(call);
    groups.set(facts.canonical, group);
  }
  const rows: ToolCallRow[] = [];
  for (const tool of [...groups.keys()].sort(compareCodeUnits)) {
    const group = groups.get(tool)!;
    const callIds = new Set(group.states.map((s) => s.callId));
    rows.push({
      tool,
      kinds: sortedUnique(group.calls.flatMap((c) => [c.kind, c.effectKind])),
      native_names: sortedUnique(group.calls.map((c) => c.native)),
      count: group.states.length,
      outcomes: tally(group.states.map((s) => s.outcome ?? 'none')),
      not_run: group.states.filter((s) => notRunReason(s) !== undefined).length,
      decisions: verdicts(
        table.decisions.filter((d) => d.tool === tool && d.call !== undefined && callIds.has(d.call)),
      ),
      sources: sortedUnique(group.states.flatMap((s) => s.witnesses.map((w) => w.source))),
    });
  }
  return rows;
}

export function processRows(promotions: Promotions): ProcessRow[] {
  return [...promotions.processes]
    .sort((a, b) => a.firstSeq - b.firstSeq)
    .map(({ call, facts, command }) => {
      const row: ProcessRow = {
        command,
        tool: facts.canonical,
        call: call.callId,
        sources: sortedUnique(call.witnesses.map((w) => w.source)),
        agents: sortedUnique(call.witnesses.flatMap((w) => w.agent ?? [])),
        seqs: [...new Set(call.witnesses.map((w) => w.seq))].sort((a, b) => a - b),
      };
      if (call.exitCode !== undefined) row.exit_code = call.exitCode;
      if (call.durationMs !== undefined) row.duration_ms = call.durationMs;
      if (call.outcome !== undefined) row.outcome = call.outcome;
      return row;
    });
}
