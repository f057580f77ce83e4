/**
 * `tally run` watches the recorder while the agent runs. A recorder that is gone is started again;
 * one that still holds its port but does not answer (here stopped with SIGSTOP, as a hung process
 * looks from outside: the kernel still takes connections, nothing answers) cannot be replaced, and
 * the run says so at once instead of trying to start a second recorder on a port that is taken.
 * Oracle: the kernel's SIGSTOP/SIGCONT; the recorder's pid is the one its own pid file names.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeProject } from '../cli/tally-process.js';
import { runAgentScript } from './agent-script.js';

describe('tally run and a recorder that stops answering', () => {
  it('says the recorder does not answer, does not start another, and the session is sealed once it answers again', async () => {
    const p = makeProject('tally-watchdog-');
    assert.equal((await p.tally(['init'])).code, 0);
    const flag = join(p.dir, 'go-on');
    const stopped = join(p.dir, 'stopped');
    const pidFile = join(p.home, 'run', 'recorder.pid');
    // The "agent": stops the recorder, then waits until the test has seen what the run said.
    const script = [
      '#!/bin/sh',
      `pid=$(sed -n 's/.*"pid":\\([0-9]*\\).*/\\1/p' '${pidFile}')`,
      'kill -STOP "$pid"',
      `echo "$pid" > '${stopped}'`,
      `while [ ! -e '${flag}' ]; do sleep 0.1; done`,
    ].join('\n');
    const run = runAgentScript(p, script);
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

  it('seals its session through a recorder it started again, though no event named the session since', async () => {
    const p = makeProject('tally-watchdog-');
    assert.equal((await p.tally(['init'])).code, 0);
    const pidFile = join(p.home, 'run', 'recorder.pid');
    // The "agent": kills the recorder (SIGKILL), waits until the run has started another, and exits
    // without a hook: the new recorder has not held the session.
    const pidOf = `sed -n 's/.*"pid":\\([0-9]*\\).*/\\1/p' '${pidFile}' 2>/dev/null`;
    const script = [
      '#!/bin/sh',
      `first=$(${pidOf})`,
      'kill -KILL "$first"',
      'i=0',
      `while [ $i -lt 300 ]; do now=$(${pidOf}); if [ -n "$now" ] && [ "$now" != "$first" ]; then break; fi; sleep 0.1; i=$((i+1)); done`,
    ].join('\n');
    const run = runAgentScript(p, script);
    let stderr = '';
    run.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    run.stdout.resume();
    await new Promise((resolve) => run.on('close', resolve));
    await p.tally(['recorder', 'stop']);
    assert.match(stderr, /recorder stopped; starting it again/);
    assert.doesNotMatch(stderr, /could not be sealed/);
    assert.match(stderr, /records sealed in .*\.tally\n/);
    const session = /session (ses_[A-Za-z0-9_]+)/.exec(stderr)![1]!;
    const status = JSON.parse(
      (await p.tally(['session', 'status', '--session', session, '--json'])).stdout,
    ) as {
      state: string;
    };
    assert.equal(status.state, 'closed');
  });
});
