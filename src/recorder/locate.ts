/**
 * Finding a running recorder with as little as possible loaded: its port and secret read straight
 * from `TALLY_HOME` (node: built-ins and core's regular-file reads only: a FIFO put there fails the
 * lookup at once instead of holding every hook). The command shims run this on every hook.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { readRegularFileSync } from '../core/regular-file.js';

const SMALL_FILE_LIMIT = 64 * 1024;

function readSmall(path: string): string {
  return readRegularFileSync(path, SMALL_FILE_LIMIT).toString('utf8');
}

export function homeOf(env: NodeJS.ProcessEnv): string {
  const home = env.TALLY_HOME;
  return resolve(home !== undefined && home !== '' ? home : join(homedir(), '.tally'));
}

/** The recorder's port and secret, or null when this home has none configured yet. */
export function locateRecorder(home: string): { port: number; secret: string } | null {
  try {
    const port = (JSON.parse(readSmall(join(home, 'recorder.json'))) as { port?: unknown }).port;
    const secret = readSmall(join(home, 'run', 'recorder.secret')).trim();
    if (typeof port !== 'number' || !/^[0-9a-f]{64}$/.test(secret)) return null;
    return { port, secret };
  } catch {
    return null;
  }
}
