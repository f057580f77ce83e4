/**
 * Loaded into every node process of a probed run (`NODE_OPTIONS=--import=<this>`); it does
 * anything only in a `tally hook …` process: when that process exits it appends one line to the
 * file HOOK_LOG_ENV names — when its request to the recorder went out and its answer came back,
 * and when it exited, in ms since the process started (`performance.timeOrigin`).
 */
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';

export const HOOK_LOG_ENV = 'TALLY_BENCH_HOOK_LOG';

export interface ProbedHook {
  channel: string;
  /** Epoch ms at which the process started. */
  started: number;
  sentMs?: number;
  answeredMs?: number;
  exitMs: number;
}

const log = process.env[HOOK_LOG_ENV];
if (log && process.argv[1]?.endsWith('tally.js') && process.argv[2] === 'hook') {
  let sentMs: number | undefined;
  let answeredMs: number | undefined;
  subscribe('http.client.request.start', () => {
    sentMs ??= performance.now();
  });
  subscribe('http.client.response.finish', () => {
    answeredMs = performance.now();
  });
  process.on('exit', () => {
    const line: ProbedHook = {
      channel: process.argv[3] ?? '',
      started: performance.timeOrigin,
      ...(sentMs !== undefined ? { sentMs } : {}),
      ...(answeredMs !== undefined ? { answeredMs } : {}),
      exitMs: performance.now(),
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
}
