/**
 * The bar, with the real Claude Code under `tally run`: every file the session changed is in the
 * receipt exactly once, with its net operation and every source that really saw it — a Write and an
 * Edit (hooks), `sed -i` and a build step inside Bash, a deletion and a rename by Bash, a subagent's
 * Write, and a person's edit between two model turns (only the reconcile pass sees those) — while a
 * file dirty before the session and left alone is not blamed on it, and a forbidden `rm -rf` is
 * stopped before it runs. Oracles: the files on disk after the run (what really changed), git's
 * own status of the same repository, the certificate, and the verifier.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Receipt } from '../../src/evidence/receipt/receipt.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { runSummary, tallyProject, underTallyRun, verifiedUnderCertificate } from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

function receiptOf(pkg: string): Receipt {
  const lines = readFileSync(pkg, 'utf8').trimEnd().split('\n');
  const seal = JSON.parse(lines.at(-1)!) as { receipt: { payload: string } };
  return JSON.parse(Buffer.from(seal.receipt.payload, 'base64').toString('utf8')) as Receipt;
}

describe('the bar: tally run -- claude (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('every changed file once, with its net operation and all its sources; the dirty file left alone is absent; rm -rf blocked', async (t) => {
    const repo = makeRepo({
      files: {
        'README.md': '# demo\n',
        'edit.txt': 'old line\n',
        'sed.txt': 'colour\n',
        'delete.txt': 'bye\n',
        'rename.txt': 'moving\n',
        'manual.txt': 'by hand\n',
        'dirty.txt': 'committed\n',
        'build.sh': 'mkdir -p gen/deep/er && echo "export const built = 1;" > gen/deep/er/out.js\n',
        'keep/important.txt': 'precious\n',
      },
    });
    const home = makeTempDir('tally-home');
    // Dirty before the session, and never touched during it.
    writeFileSync(join(repo.dir, 'dirty.txt'), 'edited before the session\n');
    try {
      const allow = [
        'Write',
        'Edit',
        'Read',
        'Agent',
        'Bash(sed *)',
        'Bash(sh *)',
        'Bash(rm delete.txt)',
        'Bash(mv *)',
      ];
      const project = await tallyProject(repo.dir, home, [
        ...allow.flatMap((a) => ['--allow', a]),
        '--forbid',
        'Bash(rm -rf *)',
      ]);
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Make the changes, delegate one file, then clean up.',
        permissive: false,
        script: {
          steps: [
            call('Write', { file_path: join(repo.dir, 'written.txt'), content: 'new\n' }),
            call('Read', { file_path: join(repo.dir, 'edit.txt') }),
            call('Edit', { file_path: join(repo.dir, 'edit.txt'), old_string: 'old', new_string: 'new' }),
            call('Bash', { command: "sed -i 's/colour/color/' sed.txt", description: 'spelling' }),
            call('Bash', { command: 'sh build.sh', description: 'build' }),
            call('Bash', { command: 'rm delete.txt', description: 'delete' }),
            call('Bash', { command: 'mv rename.txt renamed.txt', description: 'rename' }),
            call('Agent', {
              description: 'Write sub file',
              prompt: 'SUBTASK-BAR: write sub.txt',
              subagent_type: 'general-purpose',
              run_in_background: false,
            }),
            call('Bash', { command: 'rm -rf keep', description: 'clean up' }),
            text('Done.'),
          ],
          threads: [
            {
              match: 'SUBTASK-BAR',
              steps: [
                call('Write', { file_path: join(repo.dir, 'sub.txt'), content: 'from subagent\n' }),
                text('Sub done.'),
              ],
            },
          ],
          // A person edits a file by hand between two turns of the main conversation.
          beforeStep: (k, thread) => {
            if (thread === 'main' && k === 3) writeFileSync(join(repo.dir, 'manual.txt'), 'edited by hand\n');
          },
        },
        env: project.env,
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));

      // What really happened on disk.
      assert.equal(repo.read('written.txt'), 'new\n');
      assert.equal(repo.read('edit.txt'), 'new line\n');
      assert.equal(repo.read('sed.txt'), 'color\n');
      assert.ok(existsSync(join(repo.dir, 'gen/deep/er/out.js')));
      assert.ok(!existsSync(join(repo.dir, 'delete.txt')));
      assert.equal(repo.read('renamed.txt'), 'moving\n');
      assert.equal(repo.read('sub.txt'), 'from subagent\n');
      assert.equal(repo.read('manual.txt'), 'edited by hand\n');
      assert.ok(existsSync(join(repo.dir, 'keep/important.txt')), 'rm -rf was blocked before it ran');

      const receipt = receiptOf(String(summary.package));
      const rows = new Map(receipt.files_written.map((r) => [r.path, r]));
      t.diagnostic(
        JSON.stringify(receipt.files_written.map((r) => [r.path, r.operation, r.from, r.sources])),
      );
      assert.equal(rows.size, receipt.files_written.length, 'a path has more than one row');
      const expected: [string, string, string | null, string[]][] = [
        ['edit.txt', 'modified', null, ['git-reconcile', 'hook']],
        ['gen/deep/er/out.js', 'created', null, ['git-reconcile']],
        ['delete.txt', 'deleted', null, ['git-reconcile']],
        ['manual.txt', 'modified', null, ['git-reconcile']],
        ['renamed.txt', 'renamed', 'rename.txt', ['git-reconcile']],
        ['sed.txt', 'modified', null, ['git-reconcile']],
        ['sub.txt', 'created', null, ['git-reconcile', 'hook']],
        ['written.txt', 'created', null, ['git-reconcile', 'hook']],
      ];
      for (const [path, operation, from, sources] of expected) {
        const row = rows.get(path);
        assert.ok(row, `${path} is not in the receipt`);
        assert.equal(row.operation, operation, path);
        assert.equal(row.from ?? null, from, path);
        // Every source that saw it; the hook may also have reported a Bash edit itself.
        for (const source of sources) assert.ok(row.sources.includes(source), `${path}: ${row.sources}`);
      }
      // git's own view of the same tree: every path it shows changed is in the receipt, and nothing
      // else is, except the file already dirty before the session (which must be absent).
      const status = repo
        .git('status', '--porcelain=v1', '--untracked-files=all')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3))
        .filter((p) => !p.startsWith('.tally/'));
      const gitPaths = new Set(status.map((p) => (p.includes(' -> ') ? p.split(' -> ')[1]! : p)));
      gitPaths.delete('dirty.txt');
      gitPaths.delete('rename.txt');
      gitPaths.add('renamed.txt');
      assert.deepEqual([...rows.keys()].sort(), [...gitPaths].sort());
      assert.ok(!rows.has('dirty.txt'), 'the file dirty before the session was blamed on it');
      assert.ok(!rows.has('rename.txt'), 'the rename source has a row of its own');
      assert.ok(!rows.has('keep/important.txt'));
      // The subagent's Write is attributed to the subagent.
      assert.ok(
        rows.get('sub.txt')!.agents.some((a) => a !== receipt.agent_graph.roots[0]),
        JSON.stringify(rows.get('sub.txt')),
      );

      // The forbidden call: blocked natively, recorded as the certificate backend's decision.
      const deny = receipt.decisions.find((d) => d.decision === 'deny');
      assert.equal(deny?.by, 'dev.tally.certificate');
      assert.equal(deny?.rule, 'Bash(rm -rf *)');
      const cross = (await verifiedUnderCertificate(project, String(summary.package))) as unknown as {
        checks: { check: string; ok: boolean; detail?: Record<string, unknown> }[];
      };
      const unauthorized = cross.checks.find((c) => c.check === 'unauthorized_calls');
      t.diagnostic(JSON.stringify(unauthorized));
      assert.equal(unauthorized?.ok, true, JSON.stringify(unauthorized));
      // Cross-verification: the one forbidden call was blocked; no unauthorized call ran.
      const calls = (unauthorized?.detail?.calls ?? []) as { blocked: boolean; pattern?: string }[];
      assert.deepEqual(
        calls.map((c) => [c.pattern, c.blocked]),
        [['Bash(rm -rf *)', true]],
      );
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
