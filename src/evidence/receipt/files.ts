/**
 * The file ledger: every witness of a file read or write, from whichever channel, folded into one
 * row per (path, operation) with every witnessing source kept. Witnesses are only ever added, so a
 * provenance label can never be overwritten by a later one.
 */

import { compareCodeUnits, type FileOperation, type NormalPath, sortedUnique } from '../normalize.js';
import { seqFields, Witnesses, type WitnessSet } from './bounds.js';
import { groupsByRow, netOperation, RECONCILE_SOURCES, seenOnlyInTranscript } from './net.js';
import type { WriteWitness } from './types.js';

export interface FileReadRow {
  path: string;
  outside_repo?: true;
  sources: string[];
  agents: string[];
  /** At most `SEQS_MAX` (docs/receipt.md#bounds); `seq_count` is present when there are more. */
  seqs: number[];
  seq_count?: number;
}

export interface FileWriteRow {
  path: string;
  operation: FileOperation;
  from?: string;
  outside_repo?: true;
  before?: string;
  after?: string;
  additions?: number;
  deletions?: number;
  agent_caused?: boolean;
  dirty_at_start?: true;
  /** Only the agent's transcript (and the reconcile pass) saw it: no hook reported it. */
  seen_only_in_transcript?: true;
  sources: string[];
  agents: string[];
  /** At most `SEQS_MAX` (docs/receipt.md#bounds); `seq_count` is present when there are more. */
  seqs: number[];
  seq_count?: number;
}

/** Definite operations an inferred one may join, in order of preference. */
const JOINS: Record<FileOperation, readonly FileOperation[]> = {
  written: ['created', 'modified', 'renamed'],
  modified: ['modified', 'created', 'renamed'],
  created: ['created'],
  deleted: ['deleted'],
  renamed: ['renamed'],
};

function rowKey(path: string, operation: FileOperation, from: string | undefined): string {
  return JSON.stringify([path, operation, from ?? null]);
}

function compareRows(a: FileWriteRow, b: FileWriteRow): number {
  return (
    compareCodeUnits(a.path, b.path) ||
    compareCodeUnits(a.operation, b.operation) ||
    compareCodeUnits(a.from ?? '', b.from ?? '')
  );
}

/** `files_read`: one row per path, every witness joined as it is folded in. */
export class ReadLedger {
  private readonly rows = new Map<string, { outside: boolean; w: Witnesses }>();

  add(path: NormalPath, witnesses: WitnessSet): void {
    let row = this.rows.get(path.path);
    if (row === undefined) {
      row = { outside: false, w: new Witnesses() };
      this.rows.set(path.path, row);
    }
    if (path.outside) row.outside = true;
    row.w.join(witnesses);
  }

  build(): FileReadRow[] {
    const out: FileReadRow[] = [];
    for (const path of [...this.rows.keys()].sort(compareCodeUnits)) {
      const { outside, w } = this.rows.get(path)!;
      const row: FileReadRow = { path, sources: sortedUnique(w.sources), agents: [], seqs: [] };
      if (outside) row.outside_repo = true;
      row.agents = sortedUnique(w.agents);
      Object.assign(row, seqFields(w.seqs));
      out.push(row);
    }
    return out;
  }
}

interface Dated<T> {
  seq: number;
  value: T;
}

/**
 * One `files_written` row being gathered: what its witnesses said, reduced as they arrive —
 * `before` from the earliest witness that knew it, `after` and line counts from the latest (the
 * reconcile pass's line counts win), witnesses joined.
 */
interface WriteGroup {
  path: string;
  operation: FileOperation;
  from?: string;
  outside: boolean;
  before?: Dated<string>;
  after?: Dated<string>;
  lines?: Dated<{ additions?: number; deletions?: number }>;
  reconcileLines?: Dated<{ additions?: number; deletions?: number }>;
  agentCausedTrue: boolean;
  agentCausedFalse: boolean;
  w: Witnesses;
  /** A reconcile pass reported this (path, operation, from): its operation is the net one. */
  reconciled: boolean;
  firstSeq: number;
  lastSeq: number;
}

function newGroup(path: string, operation: FileOperation, from: string | undefined): WriteGroup {
  const group: WriteGroup = {
    path,
    operation,
    outside: false,
    agentCausedTrue: false,
    agentCausedFalse: false,
    w: new Witnesses(),
    reconciled: false,
    firstSeq: Number.POSITIVE_INFINITY,
    lastSeq: -1,
  };
  if (from !== undefined) group.from = from;
  return group;
}

/** Equal `seq`s keep the earlier witness for `before` and take the later one for `after` and lines. */
function addDefinite(group: WriteGroup, w: WriteWitness): void {
  if (w.outside) group.outside = true;
  if (w.before !== undefined && (group.before === undefined || w.seq < group.before.seq))
    group.before = { seq: w.seq, value: w.before };
  if (w.after !== undefined && (group.after === undefined || w.seq >= group.after.seq))
    group.after = { seq: w.seq, value: w.after };
  if (w.additions !== undefined || w.deletions !== undefined) {
    const lines: Dated<{ additions?: number; deletions?: number }> = { seq: w.seq, value: {} };
    if (w.additions !== undefined) lines.value.additions = w.additions;
    if (w.deletions !== undefined) lines.value.deletions = w.deletions;
    if (group.lines === undefined || w.seq >= group.lines.seq) group.lines = lines;
    if (
      RECONCILE_SOURCES.has(w.source) &&
      (group.reconcileLines === undefined || w.seq >= group.reconcileLines.seq)
    )
      group.reconcileLines = lines;
  }
  if (w.agentCaused === true) group.agentCausedTrue = true;
  else if (w.agentCaused === false) group.agentCausedFalse = true;
  if (RECONCILE_SOURCES.has(w.source)) group.reconciled = true;
  span(group, w.seq);
  group.w.add(w.seq, w.source, w.agent);
}

function span(group: WriteGroup, seq: number): void {
  if (seq < group.firstSeq) group.firstSeq = seq;
  if (seq > group.lastSeq) group.lastSeq = seq;
}

function laterDated<T>(a: Dated<T> | undefined, b: Dated<T> | undefined): Dated<T> | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return b.seq >= a.seq ? b : a;
}

/** One path's groups as one group of its net operation, every witness kept. */
function mergeNet(path: string, groups: WriteGroup[]): WriteGroup {
  if (groups.length === 1) return groups[0]!;
  const net = netOperation(path, groups);
  const merged = newGroup(path, net.operation, net.from);
  for (const g of groups) {
    if (g.outside && g.path === path) merged.outside = true;
    if (g.before !== undefined && (merged.before === undefined || g.before.seq < merged.before.seq))
      merged.before = g.before;
    merged.after = laterDated(merged.after, g.after);
    merged.lines = laterDated(merged.lines, g.lines);
    merged.reconcileLines = laterDated(merged.reconcileLines, g.reconcileLines);
    if (g.agentCausedTrue) merged.agentCausedTrue = true;
    if (g.agentCausedFalse) merged.agentCausedFalse = true;
    if (g.reconciled) merged.reconciled = true;
    span(merged, g.firstSeq);
    span(merged, g.lastSeq);
    merged.w.join(g.w);
  }
  if (merged.operation === 'deleted') delete merged.after;
  return merged;
}

function rowOf(group: WriteGroup): FileWriteRow {
  const row: FileWriteRow = {
    path: group.path,
    operation: group.operation,
    sources: [],
    agents: [],
    seqs: [],
  };
  if (group.from !== undefined) row.from = group.from;
  if (group.outside) row.outside_repo = true;
  if (group.before !== undefined) row.before = group.before.value;
  if (group.after !== undefined) row.after = group.after.value;
  // Line counts: the reconcile pass measures the whole session's net change, so it wins; otherwise
  // the latest channel that measured them.
  const lines = (group.reconcileLines ?? group.lines)?.value;
  if (lines?.additions !== undefined) row.additions = lines.additions;
  if (lines?.deletions !== undefined) row.deletions = lines.deletions;
  if (group.agentCausedTrue) row.agent_caused = true;
  else if (group.agentCausedFalse) row.agent_caused = false;
  row.sources = sortedUnique(group.w.sources);
  if (seenOnlyInTranscript(row.sources)) row.seen_only_in_transcript = true;
  row.agents = sortedUnique(group.w.agents);
  Object.assign(row, seqFields(group.w.seqs));
  return row;
}

export interface FoldedWrites {
  rows: FileWriteRow[];
  /** Paths only the reconcile pass reported, whose content is what it already was at the start. */
  unchangedSinceStart: string[];
}

/**
 * `files_written`. Definite witnesses group by (path, operation, rename source) as they arrive.
 * Inferred witnesses gather per (path, operation); at the end each gathering joins the preferred
 * definite group of the same path when one exists, else it is a row of its own.
 */
export class WriteLedger {
  private readonly definite = new Map<string, WriteGroup>();
  /** Definite groups by path, so an inferred gathering finds its row without scanning them all. */
  private readonly definiteByPath = new Map<string, WriteGroup[]>();
  private readonly inferred = new Map<string, WriteGroup>();

  addDefinite(w: WriteWitness): void {
    const key = rowKey(w.path, w.operation, w.from);
    let group = this.definite.get(key);
    if (group === undefined) {
      group = newGroup(w.path, w.operation, w.from);
      this.definite.set(key, group);
      const same = this.definiteByPath.get(w.path);
      if (same === undefined) this.definiteByPath.set(w.path, [group]);
      else same.push(group);
    }
    addDefinite(group, w);
  }

  addInferred(path: NormalPath, operation: FileOperation, witnesses: WitnessSet): void {
    const key = rowKey(path.path, operation, undefined);
    let group = this.inferred.get(key);
    if (group === undefined) {
      group = newGroup(path.path, operation, undefined);
      this.inferred.set(key, group);
    }
    if (path.outside) group.outside = true;
    group.agentCausedTrue = true;
    for (const seq of witnesses.seqs) span(group, seq);
    group.w.join(witnesses);
  }

  /**
   * The rows. `net` (receipt v2): one row per path with its net operation (./net.ts); otherwise
   * (v1) one row per (path, operation, rename source). `keepDeletedSources`: the pass's summary
   * says `rename_sources: "kept"` (net.ts `groupsByRow`).
   */
  build(
    baselineDirty: ReadonlyMap<string, string | null>,
    net: boolean,
    keepDeletedSources: boolean,
  ): FoldedWrites {
    let groups: WriteGroup[] = [...this.definite.values()];
    for (const gathered of this.inferred.values()) {
      const candidates = this.definiteByPath.get(gathered.path) ?? [];
      const target = JOINS[gathered.operation]
        .flatMap((op) =>
          candidates
            .filter((g) => g.operation === op)
            .sort((a, b) => compareCodeUnits(a.from ?? '', b.from ?? '')),
        )
        .at(0);
      if (target === undefined) {
        groups.push(gathered);
        continue;
      }
      if (gathered.outside) target.outside = true;
      target.agentCausedTrue = true;
      span(target, gathered.firstSeq);
      span(target, gathered.lastSeq);
      target.w.join(gathered.w);
    }
    if (net)
      groups = [...groupsByRow(groups, keepDeletedSources).entries()].map(([path, list]) =>
        mergeNet(path, list),
      );
    const rows: FileWriteRow[] = [];
    const unchangedSinceStart: string[] = [];
    for (const group of groups) {
      const row = rowOf(group);
      if (baselineDirty.has(row.path)) {
        const atStart = baselineDirty.get(row.path);
        const onlyReconcile = row.sources.every((s) => RECONCILE_SOURCES.has(s));
        const same =
          row.after !== undefined ? row.after === atStart : row.operation === 'deleted' && atStart === null;
        if (onlyReconcile && same) {
          unchangedSinceStart.push(row.path);
          continue;
        }
        row.dirty_at_start = true;
      }
      rows.push(row);
    }
    return { rows: rows.sort(compareRows), unchangedSinceStart: sortedUnique(unchangedSinceStart) };
  }
}

export type { WriteWitness } from './types.js';
