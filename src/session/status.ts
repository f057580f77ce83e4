/** What `tally session status` reports: a session's state, its records so far, its log. */
import { existsSync } from 'node:fs';
import { readLogLines } from '../evidence/log/reader.js';
import type { AgentAttribution } from '../evidence/record/record.js';
import { logPath, resolveSession } from './store.js';

export interface SessionStatus {
  session: string;
  state: 'open' | 'closed';
  started_at: string;
  closed_at: string | null;
  agent: AgentAttribution | null;
  records: number;
  log: string;
  log_bytes: number;
  /** A torn last line is waiting to be quarantined (it is, on the next append or at close). */
  torn_tail: boolean;
  package: string | null;
}

export async function sessionStatus(state: string, id: string): Promise<SessionStatus> {
  const info = resolveSession(state, id);
  const path = logPath(state, info.id);
  let records = 0;
  let torn = false;
  // The content's length, not the file's: a store holding the log reserves space after it.
  let bytes = 0;
  if (existsSync(path)) {
    for await (const l of readLogLines(path)) {
      if (l.torn) torn = true;
      else records += 1;
      bytes = l.offset + l.line.length + (l.torn ? 0 : 1);
    }
  }
  return {
    session: info.id,
    state: info.state,
    started_at: info.started_at,
    closed_at: info.closed_at ?? null,
    agent: info.agent ?? null,
    records,
    log: path,
    log_bytes: bytes,
    torn_tail: torn,
    package: info.package ?? null,
  };
}
