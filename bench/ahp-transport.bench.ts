/**
 * AHP transport overhead: one intercept end to end against the raw round trip of the same
 * transport, measured twice.
 * - any CPU: in this process, the scheduler placing the harness and the backend processes as it
 *   likes. On a small virtual machine the raw round trip then swings with where each wakeup lands
 *   (a wakeup on an idle CPU costs tens of microseconds), so compare rows of one run only.
 * - one CPU: the same series in a child process under `taskset -c 0` (Linux), every process on one
 *   CPU: no cross-CPU wakeups, so the difference is the work done per intercept.
 * Rows say how many microseconds Tally adds besides the ratio (docs/performance.md).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { httpBench, perEventBench, setPlacement, stdioBench } from './ahp-transport-series.js';
import type { BenchModule, BenchResult } from './harness.js';

const PROGRAM = fileURLToPath(new URL('./programs/ahp-transport.js', import.meta.url));
const TASKSET = '/usr/bin/taskset';

function oneCpu(): BenchResult[] {
  if (process.platform !== 'linux' || !existsSync(TASKSET)) {
    process.stderr.write('  one-CPU rows skipped: they need Linux and /usr/bin/taskset (util-linux)\n');
    return [];
  }
  const out = execFileSync(TASKSET, ['-c', '0', process.execPath, PROGRAM, ', one CPU'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out) as BenchResult[];
}

const bench: BenchModule = {
  title: 'AHP transports: end-to-end intercept vs raw round trip',
  async run() {
    setPlacement(', any CPU');
    const free = [...(await httpBench()), ...(await stdioBench())];
    return [...free, ...oneCpu(), ...(await perEventBench())];
  },
};

export default bench;
