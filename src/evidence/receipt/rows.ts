/**
 * Rows of the receipt gathered as calls are folded: one per tool (`tool_calls`), one per process
 * (`processes`, the first `PROCESS_ROWS` of them, the rest summarised per command), and the
 * counters every section shares.
 */
import { compareCodeUnits, sortedUnique } from '../normalize.js';
import { clipText, PROCESS_ROWS, seqFields } from './bounds.js';
import {
  type CallState,
  identify,
  notRunReason,
  type ProcessRow,
  type ToolIdentityFacts,
  type Verdict,
} from './calls.js';
import { type GroupsOmitted, KeptGroups } from './groups.js';
import { seenOnlyInTranscript } from './net.js';
import type { ToolCallRow } from './types.js';

/** Counts as an object whose keys are in code-unit order (canonical JSON sorts them again anyway). */
export function sortedCounts(counts: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries([...counts.entries()].sort((a, b) => compareCodeUnits(a[0], b[0])));
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

interface ToolGroup {
  kinds: Set<string>;
  natives: Set<string>;
  count: number;
  outcomes: Map<string, number>;
  notRun: number;
  decisions: Record<Verdict, number>;
  sources: Set<string>;
}

/** `tool_calls`: one row per canonical tool name, each folded call counted once. */
export class ToolLedger {
  private readonly groups = new Map<string, ToolGroup>();

  add(call: CallState, facts: ToolIdentityFacts = identify(call)): void {
    let group = this.groups.get(facts.canonical);
    if (group === undefined) {
      group = {
        kinds: new Set(),
        natives: new Set(),
        count: 0,
        outcomes: new Map(),
        notRun: 0,
        decisions: { allow: 0, ask: 0, deny: 0 },
        sources: new Set(),
      };
      this.groups.set(facts.canonical, group);
    }
    group.kinds.add(facts.kind);
    group.kinds.add(facts.effectKind);
    group.natives.add(facts.native);
    group.count++;
    bump(group.outcomes, call.outcome ?? 'none');
    if (notRunReason(call) !== undefined) group.notRun++;
    // Decisions count toward the tool they were recorded under, when that is still the call's tool.
    const decided = call.decisions?.find((d) => d.tool === facts.canonical);
    if (decided !== undefined)
      for (const verdict of ['allow', 'ask', 'deny'] as const) group.decisions[verdict] += decided[verdict];
    for (const source of call.sources) group.sources.add(source);
  }

  build(): ToolCallRow[] {
    return [...this.groups.keys()].sort(compareCodeUnits).map((tool) => {
      const group = this.groups.get(tool)!;
      return {
        tool,
        kinds: sortedUnique(group.kinds),
        native_names: sortedUnique(group.natives),
        count: group.count,
        outcomes: sortedCounts(group.outcomes),
        not_run: group.notRun,
        decisions: { ...group.decisions },
        sources: sortedUnique(group.sources),
      };
    });
  }
}

/** Processes beyond the listed ones, one row per (command, tool). */
export interface ProcessSummaryRow {
  command: string;
  tool: string;
  count: number;
  /** Processes by exit code (`none`: no exit code recorded). */
  exit_codes: Record<string, number>;
  /** First record of the earliest of these processes, last record of the latest. */
  first_seq: number;
  last_seq: number;
}

export interface ProcessesOmitted {
  count: number;
  groups: ProcessSummaryRow[];
  /** The processes of the groups past GROUPS_MAX in `groups` order (./receipt-groups.ts). */
  groups_omitted?: GroupsOmitted;
}

type ProcessGroup = ProcessSummaryRow & { codes: Map<string, number> };

function processOrder(a: ProcessGroup, b: ProcessGroup): number {
  return compareCodeUnits(a.command, b.command) || compareCodeUnits(a.tool, b.tool);
}

interface Listed {
  firstSeq: number;
  lastSeq: number;
  ordinal: number;
  row: ProcessRow;
}

function before(a: Listed, b: Listed): boolean {
  return a.firstSeq < b.firstSeq || (a.firstSeq === b.firstSeq && a.ordinal < b.ordinal);
}

/**
 * `processes`: the first `PROCESS_ROWS` processes by first record (calls first seen in the same
 * record: in the order they were seen), whatever order their calls are folded in; the rest are
 * summarised per (command, tool) with their count.
 */
export class ProcessLedger {
  private readonly listed: Listed[] = [];
  private readonly summary = new KeptGroups<ProcessGroup>(processOrder);
  private omittedCount = 0;

  get count(): number {
    return this.listed.length + this.omittedCount;
  }

  add(call: CallState, facts: ToolIdentityFacts, full: string): void {
    const command = clipText(full);
    const row: ProcessRow = {
      command,
      tool: facts.canonical,
      call: call.callId,
      sources: sortedUnique(call.sources),
      agents: sortedUnique(call.agents),
      ...seqFields(call.seqs),
    };
    if (call.exitCode !== undefined) row.exit_code = call.exitCode;
    if (call.durationMs !== undefined) row.duration_ms = call.durationMs;
    if (call.outcome !== undefined) row.outcome = call.outcome;
    if (seenOnlyInTranscript(row.sources)) row.seen_only_in_transcript = true;
    const item: Listed = {
      firstSeq: call.firstSeq,
      lastSeq: call.seqs[call.seqs.length - 1] ?? call.firstSeq,
      ordinal: call.ordinal,
      row,
    };
    const list = this.listed;
    if (list.length === PROCESS_ROWS) {
      const last = list[list.length - 1]!;
      if (!before(item, last)) {
        this.summarise(item);
        return;
      }
    }
    let at = list.length;
    while (at > 0 && before(item, list[at - 1]!)) at--;
    list.splice(at, 0, item);
    if (list.length > PROCESS_ROWS) {
      this.summarise(list.pop()!);
    }
  }

  private summarise(item: Listed): void {
    const { lastSeq } = item;
    this.omittedCount++;
    const { command, tool, exit_code } = item.row;
    const group = this.summary.group(JSON.stringify([command, tool]), () => ({
      command,
      tool,
      count: 0,
      exit_codes: {},
      first_seq: item.firstSeq,
      last_seq: lastSeq,
      codes: new Map(),
    }));
    if (group === undefined) {
      this.summary.countRest(1, item.firstSeq, lastSeq);
      return;
    }
    group.count++;
    bump(group.codes, exit_code === undefined ? 'none' : String(exit_code));
    group.first_seq = Math.min(group.first_seq, item.firstSeq);
    group.last_seq = Math.max(group.last_seq, lastSeq);
  }

  rows(): ProcessRow[] {
    return this.listed.map((item) => item.row);
  }

  omitted(): ProcessesOmitted | undefined {
    if (this.omittedCount === 0) return undefined;
    const { groups, groups_omitted } = this.summary.result();
    const rows = groups.map(({ codes, ...group }) => ({ ...group, exit_codes: sortedCounts(codes) }));
    return groups_omitted === undefined
      ? { count: this.omittedCount, groups: rows }
      : { count: this.omittedCount, groups: rows, groups_omitted };
  }
}
