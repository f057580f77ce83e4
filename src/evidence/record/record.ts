/**
 * The event record: one per captured event, signed as it is appended to the session log.
 * The full byte format is in docs/formats.md.
 */
import type { CanonicalEvent } from '../../core/event.js';

export type { CanonicalEvent };

/** Who acted. `parent` is the instance of the agent that spawned this one (subagents). */
export interface AgentAttribution {
  name: string;
  instance?: string;
  parent?: string;
  model?: string;
  provider?: string;
}

/** A policy decision taken about the event, and who took it. */
export interface PolicyDecision {
  decision: 'allow' | 'deny' | 'ask';
  /** Who decided: e.g. "tally-policy", a backend id "com.example.guard", "user". */
  by: string;
  reason?: string;
  /** The certificate pattern or rule that matched, when one did. */
  rule?: string;
}

export const RECORD_VERSION = 1;
export const RECORD_PAYLOAD_TYPE = 'application/vnd.tally.record+json';

export interface EventRecord {
  v: typeof RECORD_VERSION;
  /** 0-based, contiguous within a session log. */
  seq: number;
  /** When the recorder appended it: RFC 3339 UTC with milliseconds. */
  time: string;
  session: string;
  /** How it was captured: hook, ahp, mcp, wrap, git-reconcile, cli, … */
  source: string;
  agent?: AgentAttribution;
  event: CanonicalEvent;
  decision?: PolicyDecision;
  /** "sha256:<hex>" of the previous record's canonical payload; null for seq 0. */
  prev: string | null;
}
