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
import { logContent } from '../log-content.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { tallyProject, toolResults } from './tally-flow.js';
import { checkTallyRun, REASON, script, stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const AGENTS = [
  { agent: 'opencode', write: 'write', shell: 'bash', pathKey: 'filePath', dirKey: 'workdir' },
] as const;

describe('OpenCode under Tally (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  for (const a of AGENTS) {
    it(`${a.agent}: tally run records and controls the session; the receipt matches the disk`, (t) =>
      checkTallyRun(t, a));

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
        const log = logContent(join(sessions, ids[0]!, 'events.log')).toString('utf8');
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
        await stopRecorder(repo.dir, home);
        repo.cleanup();
        removeTempDir(home);
      }
    });
  }
});
