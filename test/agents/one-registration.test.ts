/**
 * One registration, every agent: the same project registration and the same certificate — which
 * forbids writing into protected/, so both a redirection (`echo x > protected/a`, which no agent
 * refuses on its own) and a write tool's path (protected/b.txt) are forbidden — wired by `tally
 * run` into the five real agents (Claude Code, Codex, Gemini CLI, Qwen Code, OpenCode). Each is
 * scripted to attempt both: neither happens on disk, the tool result each model sees carries
 * Tally's reason, and each package verifies against the certificate and names the certificate
 * backend's two denials.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runTally } from '../cli/tally-process.js';
import type { AgentName } from './install.js';
import { call, type Step, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  asRecord,
  lastToolResults,
  packageRecords,
  runSummary,
  tallyProject,
  toolResults,
  underTallyRun,
  verifiedUnderCertificate,
} from './tally-flow.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const REDIRECT = 'echo x > protected/a';

/** Each agent's own two forbidden attempts: the redirection in its shell tool, the path in its write tool. */
const ATTEMPTS: Record<AgentName, (dir: string) => Step[]> = {
  'claude-code': (dir) => [
    call('Bash', { command: REDIRECT, description: 'protected' }),
    call('Write', { file_path: join(dir, 'protected/b.txt'), content: 'b\n' }),
  ],
  codex: (dir) => [
    call('exec_command', { cmd: REDIRECT, workdir: dir }),
    call('apply_patch', '*** Begin Patch\n*** Add File: protected/b.txt\n+b\n*** End Patch\n'),
  ],
  'gemini-cli': (dir) => [
    call('run_shell_command', { command: REDIRECT, description: 'protected' }),
    call('write_file', { file_path: join(dir, 'protected/b.txt'), content: 'b\n' }),
  ],
  'qwen-code': (dir) => [
    call('run_shell_command', { command: REDIRECT, description: 'protected' }),
    call('write_file', { file_path: join(dir, 'protected/b.txt'), content: 'b\n' }),
  ],
  opencode: (dir) => [
    call('bash', { command: REDIRECT, description: 'protected' }),
    call('write', { filePath: join(dir, 'protected/b.txt'), content: 'b\n' }),
  ],
};

describe('one registration, every agent (five real CLIs, scripted models)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  for (const agent of Object.keys(ATTEMPTS) as AgentName[]) {
    it(`${agent}: both forbidden writes are stopped, the model is told why, the package names the decisions`, async (t) => {
      const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
      const home = makeTempDir('tally-home');
      try {
        const project = await tallyProject(repo.dir, home);
        const run = await runAgent({
          agent,
          cwd: repo.dir,
          prompt: 'Write into protected/.',
          script: [...ATTEMPTS[agent](repo.dir), text('Done.')],
          env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
          // Claude Code headless runs a tool only when a hook allows it: no permission flag.
          permissive: agent !== 'claude-code',
          wrap: underTallyRun,
        });
        t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms`);
        assert.equal(run.exitCode, 0, run.stderr.slice(-1500));
        assert.equal(existsSync(join(repo.dir, 'protected/a')), false, 'the redirection did not run');
        assert.equal(existsSync(join(repo.dir, 'protected/b.txt')), false, 'the write did not run');
        const told = lastToolResults(run).filter((r) => r.includes('forbidden pattern'));
        t.diagnostic(`told: ${told.join(' | ')}`);
        assert.equal(told.length, 2, toolResults(run).join('\n'));
        const summary = runSummary(run.stdout);
        assert.equal(summary.verified, true, JSON.stringify(summary));
        const denials = packageRecords(String(summary.package))
          .map((r) => asRecord(r.decision))
          .filter((d) => d?.decision === 'deny');
        assert.deepEqual(
          denials.map((d) => [d?.by, d?.rule]),
          [
            ['dev.tally.certificate', 'Write(protected/**)'],
            ['dev.tally.certificate', 'Write(protected/**)'],
          ],
        );
        await verifiedUnderCertificate(project, String(summary.package));
      } finally {
        await runTally(['recorder', 'stop'], {
          cwd: repo.dir,
          env: { PATH: process.env.PATH ?? '', HOME: home, TALLY_HOME: join(home, 'tally') },
        });
        repo.cleanup();
        removeTempDir(home);
      }
    });
  }
});
