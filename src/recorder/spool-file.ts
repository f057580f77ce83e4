/**
 * The spool: where a command shim puts a hook payload it could not deliver because the recorder
 * was down (one JSON line per payload, `TALLY_HOME/spool/<channel>.jsonl`, 0600). The recorder
 * ingests it once when it starts, each payload once (by its id). Only node: built-ins and core's
 * regular-file writes here (a FIFO at the spool's name fails the write, never holds it): the shims
 * that write it start in a few milliseconds.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { appendRegularFileSync } from '../core/regular-file.js';

export interface SpoolEntry {
  /** The event id the payload is recorded under: the same whether delivered now or later. */
  id: string;
  received_at: string;
  channel: string;
  /** The Tally session the run named, when it named one. */
  session?: string;
  /** The agent the hook was installed for (`--agent NAME`): a session the spool opens runs under it. */
  agent?: string;
  payload: unknown;
  /** What the shim answered the agent without the recorder (its failure policy), when it decided. */
  answered?: { decision: 'allow' | 'deny' | 'ask'; by: string; reason?: string };
}

/** Who answers for a spooled payload: the shim, by its failure policy. */
export const SHIM_ANSWERER = 'dev.tally.hook-shim';
/** What the shim says when it denied a call the recorder could not judge. */
export const SHIM_DENIAL = 'the recorder was unreachable (fail-closed)';

/** A spool file a recorder took to ingest (`<channel>.jsonl.ingesting-<pid>-<time>`). */
export const LEFT_OVER = /^[^/]+\.jsonl\.ingesting-[0-9-]+$/;

export function spoolFile(spoolDir: string, channel: string): string {
  return join(spoolDir, `${channel}.jsonl`);
}

export function appendSpool(spoolDir: string, entry: SpoolEntry): void {
  mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
  // One write of one line: appends of lines this short do not interleave between processes. It
  // starts with a newline of its own: a shim killed while it wrote a large payload leaves its line
  // cut short, and the next line must not be read as the rest of it (the ingest skips blank lines).
  appendRegularFileSync(spoolFile(spoolDir, entry.channel), `\n${JSON.stringify(entry)}\n`, 0o600);
}
