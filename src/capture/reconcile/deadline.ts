/**
 * The deadline of one pass (a start, a close, a snapshot): one budget of time for all of it that
 * what the agent planted can make long. Its git commands are killed past it, its place resolutions
 * (real-path.ts) stopped, both a `timeout` error that fails the pass; a file's content not read
 * whole by then is unreadable instead (content.ts).
 */
import { ReconcileError } from './error.js';

/** How long one pass may take: its git commands, and the places its repositories name resolved. */
export const DEFAULT_GIT_TIMEOUT_MS = 30_000;

/** The time (ms since the epoch) past which a pass stops. */
export interface Deadline {
  at: number;
  /** The budget it was made with, for messages. */
  ms: number;
}

export function deadlineAfter(ms = DEFAULT_GIT_TIMEOUT_MS): Deadline {
  if (!Number.isSafeInteger(ms) || ms < 1)
    throw new ReconcileError('bad-option', 'the git timeout must be a positive whole number of ms', {
      field: 'timeoutMs',
    });
  return { at: Date.now() + ms, ms };
}
