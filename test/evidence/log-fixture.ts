/** A temp directory with a ship key and a log path, and numbered events: the log tests' fixture. */

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyId } from '../../src/core/keys.js';
import { createKey, loadPrivateKey } from '../../src/core/keystore.js';
import { tempDir } from '../temp.js';

/** A separate process appending to a log (programs/appender.ts), for the crash tests. */
export const APPENDER = fileURLToPath(new URL('./programs/appender.js', import.meta.url));

export function setup(prefix = 'tally-log-') {
  const dir = tempDir(prefix);
  createKey(dir, 'ship');
  const { privateKey, key } = loadPrivateKey(dir, 'ship');
  return {
    dir,
    logPath: join(dir, 'events.log'),
    signer: { privateKey, keyId: keyId(privateKey) },
    publicKey: key.publicKey,
  };
}

export const event = (i: number) => ({
  id: `e${i}`,
  type: 'tool.before',
  time: '2026-01-01T00:00:00Z',
  source: 'urn:test',
  i,
});
