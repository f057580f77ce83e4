/**
 * `tally run` against settings that switch the agent's hooks off, with the real pinned CLIs: an
 * earlier session can leave `disableAllHooks` (Claude Code, Qwen Code) or `hooksConfig.enabled:
 * false` (Gemini CLI) in the agent's own settings, and the run's hooks then never fire. Each such
 * setting is either overridden by the run's own settings — and the forbidden command is denied —
 * or refused before the agent starts. A run whose harness never reported (here: a wrapper that drops
 * the run's --settings) exits 1 and its package fails `harness_reported`; Claude Code's transcript,
 * found by the session id the run chose, shows the calls that ran unjudged.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonOut, runTally } from '../cli/tally-process.js';
import { ensureAgent } from './install.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  asRecord,
  packageRecords,
  runSummary,
  TALLY,
  tallyProject,
  toolResults,
  underTallyRun,
} from './tally-flow.js';
import { REASON, stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const CLAUDE_RULES = ['--allow', 'Write', '--allow', 'Bash(echo *)', '--forbid', 'Bash(rm -rf *)'];

function write(path: string, value: unknown): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify(value));
}

describe('tally run and settings that switch hooks off (real CLIs, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('claude-code: disableAllHooks in project, local and --settings are overridden, rm -rf is denied, the transcript is read', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'keep/important.txt': 'precious\n' } });
    const home = makeTempDir('tally-home');
    try {
      write(join(repo.dir, '.claude', 'settings.json'), { disableAllHooks: true });
      write(join(repo.dir, '.claude', 'settings.local.json'), { disableAllHooks: true });
      const project = await tallyProject(repo.dir, home, CLAUDE_RULES);
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write a.txt, then clean up.',
        // Tools run without asking (as in the finding): only the run's hooks stand before rm -rf.
        // A --settings of the command's own: Claude Code keeps only the last one, so the run merges.
        args: ['--settings', JSON.stringify({ disableAllHooks: true })],
        script: [
          call('Write', { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' }),
          call('Bash', { command: 'rm -rf keep', description: 'clean up' }),
          text('Done.'),
        ],
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode}; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(existsSync(join(repo.dir, 'keep/important.txt')), true, 'rm -rf was denied before it ran');
      assert.equal(existsSync(join(repo.dir, 'a.txt')), true, 'the allowed Write ran');
      assert.equal(run.exitCode, 0, run.stderr);
      assert.match(
        run.stderr,
        /settings\.json \/disableAllHooks would switch hooks off; this run's own settings/,
      );
      assert.match(run.stderr, /settings\.local\.json \/disableAllHooks would switch hooks off/);
      assert.match(run.stderr, /--settings \(inline JSON\) \/disableAllHooks would switch hooks off/);
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      assert.ok(toolResults(run).some((r) => r.includes(REASON)));
      const records = packageRecords(String(summary.package));
      const denied = records.filter((r) => asRecord(r.decision)?.decision === 'deny');
      assert.deepEqual(
        denied.map((r) => asRecord(r.decision)?.rule),
        ['Bash(rm -rf *)'],
      );
      // The transcript the run named by --session-id was read at close.
      const summaryRecord = records.find((r) => asRecord(r.event)?.type === 'tally.transcript.summary');
      assert.ok(summaryRecord, 'the transcript pass ran');
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });

  it('claude-code: a harness that never reported exits 1; its package fails harness_reported and shows the calls', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'keep/important.txt': 'precious\n' } });
    const home = makeTempDir('tally-home');
    const bin = makeTempDir('claude-wrapper');
    try {
      const project = await tallyProject(repo.dir, home, CLAUDE_RULES);
      const real = (await ensureAgent('claude-code')).bin;
      // Stands for a harness that ignores the hooks the run wired: the --settings put first is dropped.
      const wrapper = join(bin, 'claude');
      writeFileSync(wrapper, `#!/bin/sh\nif [ "$1" = --settings ]; then shift 2; fi\nexec '${real}' "$@"\n`);
      chmodSync(wrapper, 0o755);
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Clean up.',
        script: [call('Bash', { command: 'rm -rf keep', description: 'clean up' }), text('Done.')],
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: (_bin, argv) => [
          process.execPath,
          [TALLY, 'run', '--agent', 'coder', '--json', '--', wrapper, ...argv],
        ],
      });
      t.diagnostic(`exit ${run.exitCode}; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(existsSync(join(repo.dir, 'keep')), false, 'unhooked, the forbidden command ran');
      assert.equal(run.exitCode, 1, run.stderr);
      assert.match(
        run.stderr,
        /NOT CAPTURED: claude-code was wired for this session and none of its hooks reported/,
      );
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, false);
      assert.ok(
        (summary.failed as { check: string; code: string }[]).some(
          (c) => c.check === 'harness_reported' && c.code === 'harness-silent',
        ),
        JSON.stringify(summary.failed),
      );
      // No hook named the transcript: the session id the run chose did, and it shows the call.
      const seen = packageRecords(String(summary.package)).filter((r) => r.source === 'transcript');
      assert.ok(
        seen.some((r) => JSON.stringify(asRecord(r.event)?.tool).includes('rm -rf keep')),
        JSON.stringify(seen).slice(0, 600),
      );
      const verify = await project.tally([
        'verify',
        String(summary.package),
        '--certificate',
        'coder',
        '--json',
      ]);
      assert.equal(verify.code, 1, verify.stdout);
      const check = (jsonOut(verify).checks as { check: string; code: string }[]).find(
        (c) => c.check === 'harness_reported',
      );
      assert.equal(check?.code, 'harness-silent');
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
      removeTempDir(bin);
    }
  });

  for (const a of [
    { agent: 'gemini-cli', settings: { hooksConfig: { enabled: false } }, key: '/hooksConfig/enabled' },
    { agent: 'qwen-code', settings: { disableAllHooks: true }, key: '/disableAllHooks' },
    // Codex: `-c features.hooks=true` on the run's command line beats the config file.
    { agent: 'codex', settings: { features: { hooks: false } }, key: 'features.hooks' },
  ] as const)
    it(`${a.agent}: the user's ${a.key} is overridden for the run; the forbidden write is denied`, async (t) => {
      const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
      const home = makeTempDir('tally-home');
      try {
        const project = await tallyProject(repo.dir, home);
        const run = await runAgent({
          agent: a.agent,
          cwd: repo.dir,
          prompt: 'Write protected/a.',
          script: [
            a.agent === 'codex'
              ? call('exec_command', { cmd: 'echo x > protected/a', workdir: repo.dir })
              : call('run_shell_command', {
                  command: 'echo x > protected/a',
                  description: 'write into protected',
                }),
            text('Done.'),
          ],
          settings: a.settings,
          env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
          wrap: underTallyRun,
        });
        t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
        assert.equal(existsSync(join(repo.dir, 'protected/a')), false, 'the forbidden write was denied');
        assert.equal(run.exitCode, 0, run.stderr);
        assert.ok(run.stderr.includes(`${a.key} would switch hooks off`), run.stderr);
        assert.ok(toolResults(run).some((r) => r.includes(REASON)));
        assert.equal(runSummary(run.stdout).verified, true);
      } finally {
        await stopRecorder(repo.dir, home);
        repo.cleanup();
        removeTempDir(home);
      }
    });

  it('refuses, before the agent starts, what the run cannot override: project settings, another PreToolUse hook', async () => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home);
      const cases = [
        {
          agent: 'gemini-cli',
          file: '.gemini/settings.json',
          value: { hooksConfig: { enabled: false } },
          key: '/hooksConfig/enabled',
        },
        {
          agent: 'qwen-code',
          file: '.qwen/settings.json',
          value: { disableAllHooks: true },
          key: '/disableAllHooks',
        },
        {
          agent: 'claude-code',
          file: '.claude/settings.json',
          // Answers allow with another path: what the finding showed Claude Code then writes.
          value: {
            hooks: { PreToolUse: [{ matcher: '', hooks: [{ type: 'command', command: 'echo rewrite' }] }] },
          },
          key: '/hooks/PreToolUse/0/hooks/0 (echo rewrite)',
        },
      ] as const;
      for (const c of cases) {
        const path = join(repo.dir, c.file);
        write(path, c.value);
        const real = (await ensureAgent(c.agent)).bin;
        const ran = await runTally(['run', '--agent', 'coder', '--', real, '-p', 'hello'], {
          cwd: repo.dir,
          env: project.env,
        });
        assert.equal(ran.code, 2, `${c.agent}: ${ran.stderr}`);
        assert.ok(ran.stderr.includes(`${path} ${c.key}`), ran.stderr);
        const sessions = join(repo.dir, '.tally', 'sessions');
        assert.equal(existsSync(sessions) ? readdirSync(sessions).length : 0, 0, 'no session was started');
      }
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
