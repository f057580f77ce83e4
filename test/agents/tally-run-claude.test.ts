/**
 * The real Claude Code under `tally run`: hooks wired for this run only, the recorder judging and
 * recording every event over http hooks, the certificate allowing what it allows (headless Claude
 * Code runs a tool only when a hook says allow), a forbidden `rm -rf` stopped before it runs, and
 * a package that verifies against the certificate.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runTally } from '../cli/tally-process.js';
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));

function toolResults(body: unknown): Record<string, unknown>[] {
  return asArray(asRecord(body)?.messages)
    .flatMap((m) => asArray(asRecord(m)?.content))
    .map((b) => asRecord(b) ?? {})
    .filter((b) => b.type === 'tool_result');
}

function records(pkg: string): Record<string, unknown>[] {
  const lines = readFileSync(pkg, 'utf8').split('\n').filter(Boolean);
  return lines
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString()));
}

describe('tally run -- claude (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('captures and controls a session end to end: allowed tools run, rm -rf is blocked, the package verifies', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'keep/important.txt': 'precious\n' } });
    const home = makeTempDir('tally-home');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TALLY_HOME: join(home, 'tally'),
      TALLY_RECORDER_IDLE_MS: '4000',
    };
    try {
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
          'Bash(ls*)',
          '--allow',
          'Bash(echo *)',
          '--forbid',
          'Bash(rm -rf *)',
        ],
      ]) {
        const ran = await runTally(args, { cwd: repo.dir, env });
        assert.equal(ran.code, 0, ran.stderr);
      }
      mkdirSync(join(repo.dir, 'keep'), { recursive: true });
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write a.txt, list, then clean up.',
        // No permission flag: headless Claude Code runs a tool only when a hook allows it.
        permissive: false,
        script: [
          call('Write', { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' }),
          call('Bash', { command: 'echo beta > b.txt', description: 'b' }),
          call('Bash', { command: 'rm -rf keep', description: 'clean up' }),
          text('Done.'),
        ],
        env,
        wrap: (bin, argv) => [
          process.execPath,
          [TALLY, 'run', '--agent', 'coder', '--json', '--', bin, ...argv],
        ],
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const lastLine = run.stdout.trim().split('\n').at(-1)!;
      const summary = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('\n{') + 1 || 0)) as Record<
        string,
        unknown
      >;
      void lastLine;
      assert.equal(summary.verified, true, JSON.stringify(summary));
      assert.equal(existsSync(join(repo.dir, 'a.txt')), true, 'the allowed Write ran');
      assert.equal(readFileSync(join(repo.dir, 'b.txt'), 'utf8'), 'beta\n');
      assert.equal(
        existsSync(join(repo.dir, 'keep/important.txt')),
        true,
        'rm -rf was blocked before it ran',
      );
      // The model was told why.
      const results = toolResults(run.requests.at(-1)?.body).map((r) => JSON.stringify(r.content));
      assert.ok(
        results.some((r) => r.includes('forbidden pattern')),
        results.join('\n'),
      );
      const recs = records(String(summary.package));
      const denied = recs.find(
        (r) => (r.decision as { decision?: string } | undefined)?.decision === 'deny',
      )!;
      assert.equal((denied.decision as { by: string; rule: string }).by, 'dev.tally.certificate');
      assert.equal((denied.decision as { rule: string }).rule, 'Bash(rm -rf *)');
      assert.equal(denied.source, 'hook');
      assert.deepEqual(
        (denied.answers as { backend: string }[]).map((a) => a.backend),
        ['dev.tally.certificate'],
      );
      const verify = await runTally(['verify', String(summary.package), '--certificate', 'coder', '--json'], {
        cwd: repo.dir,
        env,
      });
      assert.equal(verify.code, 0, verify.stdout);
    } finally {
      await runTally(['recorder', 'stop'], { cwd: repo.dir, env });
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
