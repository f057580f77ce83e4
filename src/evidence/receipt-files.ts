/**
 * The file ledger: every witness of a file read or write, from whichever channel, folded into one
 * row per (path, operation) with every witnessing source kept. Witnesses are only ever added, so a
 * provenance label can never be overwritten by a later one.
 */
import { compareCodeUnits, type FileOperation, sortedUnique } from './normalize.js';

export interface FileReadRow {
  path: string;
  outside_repo?: true;
  sources: string[];
  agents: string[];
  seqs: number[];
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
  sources: string[];
  agents: string[];
  seqs: number[];
}

export interface WriteWitness {
  path: string;
  outside: boolean;
  operation: FileOperation;
  /**
   * True when the channel reported the operation itself (a file-change report, a reconcile pass);
   * false when it was inferred from the kind of tool that was called.
   */
  definite: boolean;
  from?: string;
  before?: string;
  after?: string;
  additions?: number;
  deletions?: number;
  agentCaused?: boolean;
  source: string;
  agent?: string;
  seq: number;
}

export interface ReadWitness {
  path: string;
  outside: boolean;
  source: string;
  agent?: string;
  seq: number;
}

/** Definite operations an inferred one may join, in order of preference. */
const JOINS: Record<FileOperation, readonly FileOperation[]> = {
  written: ['created', 'modified', 'renamed'],
  modified: ['modified', 'created', 'renamed'],
  created: ['created'],
  deleted: ['deleted'],
  renamed: ['renamed'],
};

export const RECONCILE_SOURCE = 'git-reconcile';

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

function seqsOf(witnesses: readonly { seq: number }[]): number[] {
  return [...new Set(witnesses.map((w) => w.seq))].sort((a, b) => a - b);
}

function agentsOf(witnesses: readonly { agent?: string }[]): string[] {
  return sortedUnique(witnesses.flatMap((w) => (w.agent === undefined ? [] : [w.agent])));
}

export function foldReads(witnesses: readonly ReadWitness[]): FileReadRow[] {
  const groups = new Map<string, ReadWitness[]>();
  for (const w of witnesses) {
    const group = groups.get(w.path);
    if (group === undefined) groups.set(w.path, [w]);
    else group.push(w);
  }
  const rows: FileReadRow[] = [];
  for (const path of [...groups.keys()].sort(compareCodeUnits)) {
    const group = groups.get(path)!;
    const row: FileReadRow = {
      path,
      sources: sortedUnique(group.map((w) => w.source)),
      agents: [],
      seqs: [],
    };
    if (group.some((w) => w.outside)) row.outside_repo = true;
    row.agents = agentsOf(group);
    row.seqs = seqsOf(group);
    rows.push(row);
  }
  return rows;
}

function mergeRow(
  key: { path: string; operation: FileOperation; from?: string },
  group: WriteWitness[],
): FileWriteRow {
  const bySeq = [...group].sort((a, b) => a.seq - b.seq);
  const row: FileWriteRow = { path: key.path, operation: key.operation, sources: [], agents: [], seqs: [] };
  if (key.from !== undefined) row.from = key.from;
  if (bySeq.some((w) => w.outside)) row.outside_repo = true;
  const before = bySeq.find((w) => w.before !== undefined)?.before;
  if (before !== undefined) row.before = before;
  const after = bySeq.findLast((w) => w.after !== undefined)?.after;
  if (after !== undefined) row.after = after;
  // Line counts: the reconcile pass measures the whole session's net change, so it wins; otherwise
  // the latest channel that measured them.
  const counted = bySeq.filter((w) => w.additions !== undefined || w.deletions !== undefined);
  const lines = counted.findLast((w) => w.source === RECONCILE_SOURCE) ?? counted[counted.length - 1];
  if (lines?.additions !== undefined) row.additions = lines.additions;
  if (lines?.deletions !== undefined) row.deletions = lines.deletions;
  if (bySeq.some((w) => w.agentCaused === true)) row.agent_caused = true;
  else if (bySeq.some((w) => w.agentCaused === false)) row.agent_caused = false;
  row.sources = sortedUnique(bySeq.map((w) => w.source));
  row.agents = agentsOf(bySeq);
  row.seqs = seqsOf(bySeq);
  return row;
}

export interface FoldedWrites {
  rows: FileWriteRow[];
  /** Paths only the reconcile pass reported, whose content is what it already was at the start. */
  unchangedSinceStart: string[];
}

/**
 * Definite witnesses group by (path, operation, rename source). An inferred witness joins the
 * preferred definite group of the same path when one exists, else it forms a group of its own.
 */
export function foldWrites(
  witnesses: readonly WriteWitness[],
  baselineDirty: ReadonlyMap<string, string | null>,
): FoldedWrites {
  type Group = { path: string; operation: FileOperation; from?: string; members: WriteWitness[] };
  const groups = new Map<string, Group>();
  /** Definite groups by path, so an inferred witness finds its row without scanning them all. */
  const definiteByPath = new Map<string, Group[]>();
  const add = (w: WriteWitness, operation: FileOperation, from: string | undefined): void => {
    const key = rowKey(w.path, operation, from);
    const group = groups.get(key);
    if (group !== undefined) {
      group.members.push(w);
      return;
    }
    const created: Group = { path: w.path, operation, ...(from === undefined ? {} : { from }), members: [w] };
    groups.set(key, created);
    if (w.definite) definiteByPath.set(w.path, [...(definiteByPath.get(w.path) ?? []), created]);
  };
  for (const w of witnesses) if (w.definite) add(w, w.operation, w.from);
  for (const w of witnesses) {
    if (w.definite) continue;
    const candidates = definiteByPath.get(w.path) ?? [];
    const target = JOINS[w.operation]
      .flatMap((op) =>
        candidates
          .filter((g) => g.operation === op)
          .sort((a, b) => compareCodeUnits(a.from ?? '', b.from ?? '')),
      )
      .at(0);
    if (target !== undefined) target.members.push(w);
    else add(w, w.operation, w.from);
  }
  const rows: FileWriteRow[] = [];
  const unchangedSinceStart: string[] = [];
  for (const group of groups.values()) {
    const row = mergeRow(group, group.members);
    if (baselineDirty.has(row.path)) {
      const atStart = baselineDirty.get(row.path);
      const onlyReconcile = row.sources.length === 1 && row.sources[0] === RECONCILE_SOURCE;
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
