/**
 * V8 tuned for Tally's long-running processes: the recorder and the MCP gateway answer one event
 * at a time, far apart, for hours. V8's default interrupt budget (tuned for code that runs a burst
 * and stops) leaves the code of an event's path unoptimised after hundreds of events; an eighth of
 * it optimises that code after tens. Set when such a process starts, before it has run its event
 * path (V8 reads the budget each time it sets one: a function's first feedback, each tier-up): the
 * recorder's hook hot path went from 1.64–1.69 to 1.26–1.33 times its floor, the gateway's
 * tools/call from 2.22–2.26 to 1.80–1.83, with 47 deoptimisations over 1,700 hooks
 * (docs/performance.md). A changed flag changes V8's flag hash, so Node's built-in modules loaded
 * after it compile without Node's own code cache (about 10 ms once, for the few a process loads
 * later); the processes start in the same time as before.
 */
import { setFlagsFromString } from 'node:v8';

const LONG_RUNNING_V8_FLAGS: readonly string[] = ['--interrupt-budget=8192'];

export function tuneForLongRunning(): void {
  for (const flag of LONG_RUNNING_V8_FLAGS) setFlagsFromString(flag);
}
