/**
 * The receipt's row types that several of its parts share, in a module of their own so that the
 * parts depend on them and not on each other.
 */
import type { FileOperation } from '../normalize.js';

export type Verdict = 'allow' | 'deny' | 'ask';

export interface DecisionRow {
  seq: number;
  decision: Verdict;
  by: string;
  /** `record`: the policy decision Tally recorded with the event; `ahp`: a `tool.permission.resolved` event. */
  via: 'record' | 'ahp';
  event_type: string;
  call?: string;
  tool?: string;
  reason?: string;
  rule?: string;
  /** v2: every backend's answer that made the decision, in dispatch order. */
  answers?: { backend: string; decision: string; status: string }[];
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

export interface ToolCallRow {
  tool: string;
  /** The tool's kind, plus the kind its own name gives an MCP or unfamiliar tool when that differs. */
  kinds: string[];
  native_names: string[];
  count: number;
  /** Calls by reported outcome; `none` when no `tool.after` was recorded. */
  outcomes: Record<string, number>;
  /** Calls known not to have run (denied or skipped). */
  not_run: number;
  decisions: Record<Verdict, number>;
  sources: string[];
}
