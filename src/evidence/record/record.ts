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
  /** The harness the agent ran in (`claude-code`, `codex`, …), when known. v2. */
  harness?: string;
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

/** One backend's answer to an intercepted event, in dispatch order (v2). */
export interface BackendAnswer {
  backend: string;
  /** What this backend said: its own decision, `none` for no opinion, `deny` when fail-closed. */
  decision: 'allow' | 'deny' | 'ask' | 'none';
  /** accepted | rejected (invalid answer) | failed (timeout, transport) | interrupted. */
  status: 'accepted' | 'rejected' | 'failed' | 'interrupted';
  /** Milliseconds from sending the request to settling this call, whole. */
  latency_ms: number;
  /** Set when the call failed or was rejected: the failure policy that settled it. */
  failure_policy?: 'fail-open' | 'fail-closed';
  /** Effect types of an accepted answer, in order (`deny`, `modify`, `inject`, …). */
  effects?: string[];
  reason?: string;
}

/** What a session was bound to when it started (v2, on the `session.start` record only). */
export interface SessionBinding {
  certificate?: { digest: string; serial: string; agent: string };
  registration?: { digest: string };
}

/** A path as the event gave it and the real path it resolves to, when the two differ (v2). */
export interface ResolvedPath {
  path: string;
  resolved: string;
}

export const RECORD_VERSION = 2;
export type RecordVersion = 1 | 2;
export const RECORD_PAYLOAD_TYPE = 'application/vnd.tally.record+json';

/** Record flags (v2): a closed vocabulary, sorted, unique. */
export const RECORD_FLAGS = ['input_changed'] as const;
export type RecordFlag = (typeof RECORD_FLAGS)[number];

export interface EventRecord {
  v: RecordVersion;
  /** 0-based, contiguous within a session log. */
  seq: number;
  /** When the recorder appended it: RFC 3339 UTC with milliseconds. */
  time: string;
  session: string;
  /** How it was captured: hook, ahp, mcp, wrap, git-reconcile, transcript, cli, recorder. */
  source: string;
  agent?: AgentAttribution;
  event: CanonicalEvent;
  /** The settled decision (v1: the certificate's; v2: the composition of every answer). */
  decision?: PolicyDecision;
  /** v2: every backend's answer, in dispatch order. */
  answers?: BackendAnswer[];
  /** v2, `session.start` only: digests of the certificate and registration in force. */
  binding?: SessionBinding;
  /** v2: paths the judge resolved through symbolic links. */
  resolved?: ResolvedPath[];
  /** v2: facts the recorder established about the event. */
  flags?: RecordFlag[];
  /** "sha256:<hex>" of the previous record's canonical payload; null for seq 0. */
  prev: string | null;
}
