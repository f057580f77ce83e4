/**
 * `tally run` watches the recorder while the agent runs. A recorder that is gone is started again;
 * one that still holds its port but does not answer (here stopped with SIGSTOP, as a hung process
 * looks from outside: the kernel still takes connections, nothing answers) cannot be replaced, and
 * the run says so at once instead of trying to start a second recorder on a port that is taken.
 * Oracle: the kernel's SIGSTOP/SIGCONT; the recorder's pid is the one its own pid file names.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeProject, TALLY_BIN } from '../cli/tally-process.js';

describe('tally run and a recorder that stops answering', () => {
  it('says the recorder does not answer, does not start another, and the session is sealed once it answers again', async () => {
    const p = makeProject('tally-watchdog-');
    assert.equal((await p.tally(['init'])).code, 0);
    const flag = join(p.dir, 'go-on');
    const stopped = join(p.dir, 'stopped');
    const pidFile = join(p.home, 'run', 'recorder.pid');
    // The "agent": stops the recorder, then waits until the test has seen what the run said.
    const agent = join(p.dir, 'agent.sh');
    const script = [
      '#!/bin/sh',
      `pid=$(sed -n 's/.*"pid":\\([0-9]*\\).*/\\1/p' '${pidFile}')`,
      'kill -STOP "$pid"',
      `echo "$pid" > '${stopped}'`,
      `while [ ! -e '${flag}' ]; do sleep 0.1; done`,
    ].join('\n');
    writeFileSync(agent, `${script}\n`, { mode: 0o755 });
    const run = spawn(process.execPath, [TALLY_BIN, 'run', '--harness', 'claude-code', '--', agent], {
      cwd: p.root,
      env: p.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => run.on('close', resolve));
    const said = new Promise<void>((resolve) =>
      run.stderr.on('data', (chunk) => {
        stderr += chunk;
        if (/does not answer|starting it again/.test(stderr)) resolve();
      }),
    );
    run.stdout.resume();
    const bound = setTimeout(() => writeFileSync(flag, ''), 60_000);
    try {
      await Promise.race([said, exited]);
    } finally {
      // Whatever happened, the recorder goes on and the agent ends.
      if (existsSync(stopped)) process.kill(Number(readFileSync(stopped, 'utf8')), 'SIGCONT');
      writeFileSync(flag, '');
      clearTimeout(bound);
    }
    const code = await exited;
    await p.tally(['recorder', 'stop']);
    assert.match(stderr, /a recorder listens on 127\.0\.0\.1:\d+ but does not answer/);
    assert.doesNotMatch(stderr, /starting it again|did not start/);
    // The agent here is a script that fires no hook, which the run reports as not captured (exit 1);
    // what matters is that the recorder, answering again, sealed the session.
    assert.notEqual(code, null, stderr);
    assert.match(stderr, /records sealed in .*\.tally\n/);
  });
});
