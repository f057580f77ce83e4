/**
 * A recorder run by a test as a process of its own (`tally recorder run --ready`, or a command that
 * execs it): resolved once it says it is ready, rejected with what it printed on stderr when it
 * exits first. Every one started is killed when the test file ends.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { after } from 'node:test';
import type { Project } from '../cli/tally-process.js';
import { TALLY_BIN } from '../cli/tally-process.js';

const running: ChildProcess[] = [];
after(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
});

/** The recorder of `p` (an idle exit of a minute), run as `program argv…` when given, else directly. */
export async function readyRecorder(
  p: Project,
  command: { program: string; argv: string[] } = {
    program: process.execPath,
    argv: [TALLY_BIN, 'recorder', 'run', '--ready'],
  },
): Promise<ChildProcess> {
  const child = spawn(command.program, command.argv, {
    env: { ...p.env, TALLY_RECORDER_IDLE_MS: '60000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  await new Promise<void>((ready, failed) => {
    child.stdout!.once('data', () => ready());
    child.once('exit', (code) => failed(new Error(`the recorder exited (${code}): ${stderr}`)));
  });
  return child;
}
