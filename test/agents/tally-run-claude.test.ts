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
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  packageRecords,
  runSummary,
  tallyProject,
  underTallyRun,
  verifiedUnderCertificate,
} from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

function toolResults(body: unknown): Record<string, unknown>[] {
  return asArray(asRecord(body)?.messages)
    .flatMap((m) => asArray(asRecord(m)?.content))
    .map((b) => asRecord(b) ?? {})
    .filter((b) => b.type === 'tool_result');
}

describe('tally run -- claude (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('captures and controls a session end to end: allowed tools run, rm -rf is blocked, the package verifies', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'keep/important.txt': 'precious\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, [
        '--allow',
        'Write',
        '--allow',
        'Bash(ls*)',
        '--allow',
        'Bash(echo *)',
        '--forbid',
        'Bash(rm -rf *)',
      ]);
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
        env: project.env,
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const summary = runSummary(run.stdout);
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
      const recs = packageRecords(String(summary.package));
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
      await verifiedUnderCertificate(project, String(summary.package));
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
