/** Where this installation's `bin/tally.js` is: what installed hooks run. */
import { fileURLToPath } from 'node:url';

export const TALLY_BIN = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));

/** node and bin/tally.js, for agents that start processes themselves (OpenCode's plugin). */
export function tallyParts(): [string, string] {
  return [process.execPath, TALLY_BIN];
}
