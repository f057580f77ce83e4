/**
 * A stdio backend may start a process that inherits its stdout and stderr and outlives it. Those
 * open pipes must not keep the harness alive once its decision is made (the issue: faults are
 * settled "never hanging the harness"), and a `per_event` backend that answered and exited must
 * not be held to its deadline by them. The harness here is the real CLI, `tally ahp dispatch`;
 * the holder process sleeps two minutes, and the only question asked is whether the CLI exits by
 * itself (it is killed only as a safety net, which fails the test).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTransport } from '../../src/ahp/transports/index.js';
import {
  dispatchFiles,
  FAULT_BACKEND,
  interceptRequest,
  options,
  stdioBackend,
  tempDir,
} from './transport-helpers.js';

const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));
const holders: string[] = [];

after(() => {
  for (const file of holders) {
    try {
      process.kill(Number(readFileSync(file, 'utf8')), 'SIGKILL');
    } catch {}
  }
});

/** Runs `tally ahp dispatch` on one tool.before event with one stdio backend in `mode`. */
function dispatchWith(mode: string, lifecycle: 'persistent' | 'per_event') {
  const dir = tempDir('tally-holder-');
  const pidFile = join(dir, 'holder.pid');
  holders.push(pidFile);
  const args = dispatchFiles(
    dir,
    {
      id: 'org.tally.test.holder',
      transport: {
        type: 'stdio',
        command: process.execPath,
        args: [FAULT_BACKEND, mode, pidFile],
        lifecycle,
      },
    },
    1500,
    'evt-holder',
  );
  const run = spawnSync(process.execPath, [TALLY, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, TALLY_HOME: dir },
  });
  return { run, pidFile };
}

describe('a process a stdio backend leaves behind', { timeout: 120_000 }, () => {
  test('persistent: the deadline settles the call and the harness exits by itself', () => {
    const { run, pidFile } = dispatchWith('holder', 'persistent');
    assert.equal(run.signal, null, 'the CLI exited by itself, not killed by the safety net');
    assert.equal(run.status, 1, 'exit 1: denied (fail-closed)');
    const outcome = JSON.parse(run.stdout) as {
      decision: string;
      subscriptions: { status: string; reason: string }[];
    };
    assert.equal(outcome.decision, 'deny', 'fail-closed settles the timeout as a denial');
    assert.equal(outcome.subscriptions[0]?.status, 'failed');
    assert.match(outcome.subscriptions[0]?.reason ?? '', /^timeout/);
    // The holder is still running: the harness let go of it without waiting for it.
    assert.doesNotThrow(() => process.kill(Number(readFileSync(pidFile, 'utf8')), 0));
  });

  test('per_event: the answer given before the backend exited counts, and the harness exits by itself', () => {
    const { run } = dispatchWith('holder-answer', 'per_event');
    assert.equal(run.signal, null, 'the CLI exited by itself, not killed by the safety net');
    const outcome = JSON.parse(run.stdout) as { subscriptions: { status: string; reason?: string }[] };
    assert.equal(outcome.subscriptions[0]?.status, 'accepted', outcome.subscriptions[0]?.reason);
  });

  test('per_event transport: the answer is read once the backend exits, not at the deadline', async () => {
    const pidFile = join(tempDir('tally-holder-'), 'holder.pid');
    holders.push(pidFile);
    const transport = createTransport(stdioBackend('holder-answer', [pidFile], 'per_event'), options());
    try {
      const deadline = AbortSignal.timeout(30_000);
      const answer = (await transport.request(interceptRequest('evt-holder-2'), deadline)) as { id: unknown };
      assert.equal(answer.id, 'evt-holder-2');
      assert.equal(deadline.aborted, false, 'answered before the deadline');
    } finally {
      await transport.close();
    }
  });
});
