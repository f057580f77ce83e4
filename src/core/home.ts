/** The Tally home: `TALLY_HOME`, or `~/.tally` when it is unset or empty, always absolute. */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function tallyHome(env: NodeJS.ProcessEnv): string {
  const home = env.TALLY_HOME;
  return resolve(home !== undefined && home !== '' ? home : join(homedir(), '.tally'));
}
