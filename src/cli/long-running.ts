/**
 * V8 tuned for Tally's long-running processes: the recorder and the MCP gateway answer one event
 * at a time, far apart, for hours. V8's default interrupt budget (tuned for code that runs a burst
 * and stops) leaves the code of an event's path unoptimised after hundreds of events; an eighth of
 * it optimises that code after tens. Set when such a process starts, before it has run its event
 * path (the functions compiled from then on take the new budget): the recorder's hook hot path
 * went from 1.64–1.69 to 1.26–1.33 times its floor, the gateway's tools/call from 2.22–2.26 to
 * 1.80–1.83, with 47 deoptimisations over 1,700 hooks (docs/performance.md).
 */
import { setFlagsFromString } from 'node:v8';

export const LONG_RUNNING_V8_FLAGS: readonly string[] = ['--interrupt-budget=8192'];

export function tuneForLongRunning(): void {
  for (const flag of LONG_RUNNING_V8_FLAGS) setFlagsFromString(flag);
}
