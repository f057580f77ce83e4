/**
 * A whole scripted session of the real Claude Code (31 tool calls: writes, shell commands, reads)
 * run alone and under `tally run` (hooks, recorder, close, verify), alternately, three times each:
 * the ratio of the medians (target ≤ 1.15), Tally's fixed costs apart (recorder start, session
 * start, seal, verify, in ms, from `tally run --json`), and the latency Tally adds per hook: the
 * agent's own time under Tally minus its time alone, over the hooks it fired.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, text } from '../test/agents/model/script.js';
import { makeRepo } from '../test/agents/repo.js';
import { runAgent } from '../test/agents/runner.js';
import { makeTempDir, removeTempDir } from '../test/agents/temp.js';
import { type BenchModule, percentile } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const TALLY = join(here, '..', '..', 'bin', 'tally.js');
const CALLS = 31;

function script(dir: string) {
  const steps = [];
  for (let i = 0; i < CALLS; i++) {
    if (i % 3 === 0) steps.push(call('Write', { file_path: join(dir, `f${i}.txt`), content: `file ${i}\n` }));
    else if (i % 3 === 1)
      steps.push(call('Bash', { command: `echo step ${i} >> log.txt`, description: `step ${i}` }));
    else steps.push(call('Read', { file_path: join(dir, 'README.md') }));
  }
  steps.push(text('Done.'));
  return steps;
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

const bench: BenchModule = {
  title: 'a whole scripted Claude Code session, alone and under tally run',
  async run() {
    const alone: number[] = [];
    const withTally: number[] = [];
    const agentUnder: number[] = [];
    const fixed: Record<string, number[]> = { recorder_ms: [], session_ms: [], seal_ms: [], verify_ms: [] };
    let hooks = 0;
    for (let round = 0; round < 3; round++) {
      for (const under of [false, true]) {
        const repo = makeRepo({ files: { 'README.md': '# bench\n' } });
        const home = makeTempDir('bench-home');
        const env: Record<string, string> = {
          PATH: process.env.PATH ?? '',
          HOME: home,
          TALLY_HOME: join(home, 'tally'),
        };
        try {
          if (under) {
            mkdirSync(join(home, 'tally'), { recursive: true });
            for (const args of [
              ['init'],
              [
                'agent',
                'register',
                '--name',
                'coder',
                '--allow',
                'Write',
                '--allow',
                'Read',
                '--allow',
                'Bash(echo *)',
              ],
            ])
              execFileSync(process.execPath, [TALLY, ...args], { cwd: repo.dir, env, stdio: 'ignore' });
          }
          const run = await runAgent({
            agent: 'claude-code',
            cwd: repo.dir,
            prompt: 'Do the steps.',
            script: script(repo.dir),
            env,
            ...(under
              ? {
                  wrap: (bin: string, argv: string[]) =>
                    [process.execPath, [TALLY, 'run', '--agent', 'coder', '--json', '--', bin, ...argv]] as [
                      string,
                      string[],
                    ],
                }
              : {}),
          });
          if (run.exitCode !== 0)
            throw new Error(
              `run ${round} ${under ? 'under tally' : 'alone'} exited ${run.exitCode}: ${run.stderr.slice(-500)}`,
            );
          if (!under) alone.push(run.durationMs);
          else {
            withTally.push(run.durationMs);
            const summary = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('\n{') + 1)) as {
              records: number;
              timings: Record<string, number>;
            };
            agentUnder.push(summary.timings.agent_ms!);
            for (const k of Object.keys(fixed)) fixed[k]!.push(summary.timings[k]!);
            hooks = summary.records;
          }
        } finally {
          if (under)
            execFileSync(process.execPath, [TALLY, 'recorder', 'stop'], {
              cwd: repo.dir,
              env,
              stdio: 'ignore',
            });
          repo.cleanup();
          removeTempDir(home);
        }
      }
    }
    const perHook = (median(agentUnder) - median(alone)) / Math.max(1, hooks);
    return [
      {
        name: `whole session, ${CALLS} tool calls, tally run vs the agent alone (median of 3)`,
        measured: `${median(withTally).toFixed(0)} ms`,
        baseline: `claude alone ${median(alone).toFixed(0)} ms`,
        ratio: median(withTally) / median(alone),
        target: '<= 1.15',
      },
      {
        name: `fixed costs: recorder ${median(fixed.recorder_ms!)} ms, session ${median(fixed.session_ms!)} ms, seal ${median(fixed.seal_ms!)} ms, verify ${median(fixed.verify_ms!)} ms`,
        measured: `${median(agentUnder).toFixed(0)} ms agent under tally`,
        baseline: `claude alone ${median(alone).toFixed(0)} ms`,
        ratio: median(agentUnder) / median(alone),
        target: 'report',
      },
      {
        name: `added latency per recorded hook event (${hooks} records)`,
        measured: `${perHook.toFixed(2)} ms`,
        baseline: 'the agent alone',
        ratio: perHook,
        target: 'report',
      },
    ];
  },
};

export default bench;
