/**
 * OpenCode under Tally, the real pinned CLI against a scripted model: `tally install opencode`
 * writes Tally's plugin (OpenCode's native hook mechanism) where OpenCode loads it, and `tally
 * uninstall` removes only it; `tally run` puts it in a config directory of the run's own. A write and a shell command that writes a file run; a
 * redirection into protected/ is stopped before it runs, and the model's tool result carries
 * Tally's reason; the package verifies and its receipt's files, processes and decisions are what
 * happened on disk.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  asArray,
  asRecord,
  packageRecords,
  receiptOf,
  runSummary,
  tallyProject,
  toolResults,
  underTallyRun,
} from './tally-flow.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

/** What the certificate judge tells the model when a forbid matches. */
const REASON = 'forbidden pattern';

const AGENTS = [{ agent: 'opencode', write: 'write', shell: 'bash' }] as const;

function script(dir: string, a: (typeof AGENTS)[number]) {
  return [
    call(a.write, { filePath: join(dir, 'a.txt'), content: 'alpha\n' }),
    call(a.shell, { command: 'echo beta > b.txt', description: 'write b.txt' }),
    call(a.shell, { command: 'echo x > protected/a', description: 'write into protected' }),
    text('Done.'),
  ];
}

describe('OpenCode under Tally (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  for (const a of AGENTS) {
    it(`${a.agent}: tally run records and controls the session; the receipt matches the disk`, async (t) => {
      const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
      const home = makeTempDir('tally-home');
      try {
        const project = await tallyProject(repo.dir, home);
        const run = await runAgent({
          agent: a.agent,
          cwd: repo.dir,
          prompt: 'Write a.txt and b.txt, then protected/a.',
          script: script(repo.dir, a),
          env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
          wrap: underTallyRun,
        });
        t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-800)}`);
        assert.equal(run.exitCode, 0, run.stderr);
        const summary = runSummary(run.stdout);
        assert.equal(summary.verified, true, JSON.stringify(summary));
        // The disk: the allowed write and shell write happened, the forbidden one did not.
        assert.equal(readFileSync(join(repo.dir, 'a.txt'), 'utf8'), 'alpha\n');
        assert.equal(readFileSync(join(repo.dir, 'b.txt'), 'utf8'), 'beta\n');
        assert.equal(existsSync(join(repo.dir, 'protected/a')), false, 'the forbidden write did not happen');
        // The model was told why.
        const results = toolResults(run);
        t.diagnostic(`tool results: ${results.join(' | ').slice(0, 800)}`);
        assert.ok(
          results.some((r) => r.includes(REASON)),
          results.join('\n'),
        );
        // The records: the deny was the certificate's, on the shell call.
        const records = packageRecords(String(summary.package));
        const denied = records.filter((r) => asRecord(r.decision)?.decision === 'deny');
        assert.equal(denied.length, 1, JSON.stringify(denied));
        assert.equal(asRecord(denied[0]!.decision)?.by, 'dev.tally.certificate');
        assert.equal(asRecord(denied[0]!.decision)?.rule, 'Write(protected/**)');
        // The receipt: files and processes as on disk, the decision named.
        const receipt = await receiptOf(project, String(summary.package));
        const written = asArray(receipt.files_written).map((f) => String(asRecord(f)?.path));
        t.diagnostic(
          `files_written ${JSON.stringify(written)}; processes ${JSON.stringify(receipt.processes)}`,
        );
        // The write tool's file is the hook's witness; b.txt was written inside a shell command,
        // which the receipt shows as that process (the agent reports no files for it).
        assert.ok(written.includes('a.txt'), JSON.stringify(written));
        assert.ok(!written.some((p) => p.startsWith('protected/')), JSON.stringify(written));
        const commands = asArray(receipt.processes).map((p) => String(asRecord(p)?.command));
        assert.ok(commands.includes('echo beta > b.txt'), JSON.stringify(commands));
        assert.ok(!commands.includes('echo x > protected/a'), JSON.stringify(commands));
        const decisions = asArray(receipt.decisions).map((d) => asRecord(d) ?? {});
        assert.ok(
          decisions.some(
            (d) =>
              d.decision === 'deny' && d.by === 'dev.tally.certificate' && d.rule === 'Write(protected/**)',
          ),
          JSON.stringify(decisions),
        );
        const verify = await project.tally([
          'verify',
          String(summary.package),
          '--certificate',
          'coder',
          '--json',
        ]);
        assert.equal(verify.code, 0, verify.stdout);
      } finally {
        await runTally(repo.dir, home);
        repo.cleanup();
        removeTempDir(home);
      }
    });

    it(`${a.agent}: tally install writes hooks the real CLI loads and obeys; uninstall removes only them`, async (t) => {
      const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
      const home = makeTempDir('tally-home');
      try {
        const project = await tallyProject(repo.dir, home);
        // A plugin of the user's own in the same directory: kept through install and uninstall.
        const pluginDir = join(repo.dir, '.opencode', 'plugin');
        mkdirSync(pluginDir, { recursive: true });
        const theirs = 'export const Theirs = async () => ({});\n';
        writeFileSync(join(pluginDir, 'theirs.js'), theirs);
        const installed = await project.tally(['install', a.agent, '--agent', 'coder', '--json']);
        assert.equal(installed.code, 0, installed.stderr);
        const report = JSON.parse(installed.stdout) as { cannot_express: string[]; hooks: unknown[] };
        assert.ok(report.cannot_express.length > 0);
        const run = await runAgent({
          agent: a.agent,
          cwd: repo.dir,
          prompt: 'Write a.txt and b.txt, then protected/a.',
          script: script(repo.dir, a),
          // The recorder started by the session's first event must outlive OpenCode's slow start.
          env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '120000' },
        });
        t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-800)}`);
        assert.equal(run.exitCode, 0, run.stderr);
        assert.equal(readFileSync(join(repo.dir, 'b.txt'), 'utf8'), 'beta\n');
        assert.equal(
          existsSync(join(repo.dir, 'protected/a')),
          false,
          'the installed hook stopped the write',
        );
        assert.ok(toolResults(run).some((r) => r.includes(REASON)));
        // The session the plugin's first event opened holds the calls (the recorder went with the
        // agent's process tree; the session stays on disk, unsealed).
        const sessions = join(repo.dir, '.tally', 'sessions');
        const ids = readdirSync(sessions).filter((d) => d.startsWith('ses_'));
        assert.equal(ids.length, 1, JSON.stringify(ids));
        const log = readFileSync(join(sessions, ids[0]!, 'events.log'), 'utf8');
        const decoded = log
          .split('\n')
          .filter(Boolean)
          .map((l) => Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString());
        assert.ok(
          decoded.some((r) => r.includes('"Write(protected/**)"') && r.includes('"deny"')),
          'the deny is recorded',
        );
        assert.ok(
          decoded.some((r) => r.includes('"session.start"')),
          'the session start is recorded',
        );
        const uninstalled = await project.tally(['uninstall', a.agent]);
        assert.equal(uninstalled.code, 0, uninstalled.stderr);
        assert.equal(existsSync(join(pluginDir, 'tally.js')), false, 'the plugin is gone');
        assert.equal(readFileSync(join(pluginDir, 'theirs.js'), 'utf8'), theirs);
      } finally {
        await runTally(repo.dir, home);
        repo.cleanup();
        removeTempDir(home);
      }
    });
  }
});

async function runTally(dir: string, home: string): Promise<void> {
  const { runTally: run } = await import('../cli/tally-process.js');
  await run(['recorder', 'stop'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: home, TALLY_HOME: join(home, 'tally') },
  });
}
