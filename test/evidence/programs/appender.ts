/**
 * A separate process that appends to a session log, for the multi-process and crash tests.
 * argv: keyDir logPath session count mode   (mode "close-each": open/append/close per event; "hold": one open)
 * Prints "ack <seq>" after each acknowledged append.
 */
import { keyId } from '../../../src/core/keys.js';
import { loadPrivateKey } from '../../../src/core/keystore.js';
import { LogWriter } from '../../../src/evidence/log/writer.js';

const [keyDir, logPath, session, countText, mode] = process.argv.slice(2);
const { privateKey } = loadPrivateKey(keyDir!, 'ship');
const signer = { privateKey, keyId: keyId(privateKey) };
const count = Number(countText);
const event = (i: number) => ({
  id: `e-${process.pid}-${i}`,
  type: 'tool.before',
  time: '2026-01-01T00:00:00Z',
  source: 'urn:test',
  n: i,
});

if (mode === 'hold') {
  const log = await LogWriter.open(logPath!, { session: session!, signer });
  for (let i = 0; i < count; i++) {
    const { seq } = await log.append({ source: 'cli', event: event(i) });
    process.stdout.write(`ack ${seq}\n`);
  }
  await log.close();
} else {
  for (let i = 0; i < count; i++) {
    const log = await LogWriter.open(logPath!, { session: session!, signer, lockTimeoutMs: 60_000 });
    const { seq } = await log.append({ source: 'cli', event: event(i) });
    await log.close();
    process.stdout.write(`ack ${seq}\n`);
  }
}
