/**
 * Finding a running recorder with as little as possible loaded: its port and secret read straight
 * from `TALLY_HOME` (node: built-ins only). The command shims run this on every hook.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function homeOf(env: NodeJS.ProcessEnv): string {
  const home = env.TALLY_HOME;
  return resolve(home !== undefined && home !== '' ? home : join(homedir(), '.tally'));
}

/** The recorder's port and secret, or null when this home has none configured yet. */
export function locateRecorder(home: string): { port: number; secret: string } | null {
  try {
    const port = (JSON.parse(readFileSync(join(home, 'recorder.json'), 'utf8')) as { port?: unknown }).port;
    const secret = readFileSync(join(home, 'run', 'recorder.secret'), 'utf8').trim();
    if (typeof port !== 'number' || !/^[0-9a-f]{64}$/.test(secret)) return null;
    return { port, secret };
  } catch {
    return null;
  }
}
