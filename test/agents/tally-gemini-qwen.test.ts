/**
 * Gemini CLI and Qwen Code under Tally, the real pinned CLIs against a scripted model: `tally
 * install` writes hooks the agent loads and obeys (and `tally uninstall` takes only them out),
 * and `tally run` wires them for one run. A write and a shell command that writes a file run; a
 * redirection into protected/ is stopped before it runs, and the model's tool result carries
 * Tally's reason; the package verifies and its receipt's files, processes and decisions are what
 * happened on disk. A Qwen subagent pinned to another directory (`agent {working_dir}`) is judged
 * where it runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { plain, readJsonc } from '../../src/capture/jsonc.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  allowing,
  asRecord,
  deniedRecords,
  runSummary,
  tallyProject,
  toolResults,
  underTallyRun,
  verifiedUnderCertificate,
} from './tally-flow.js';
import { checkTallyRun, REASON, script, stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const AGENTS = [
  {
    agent: 'gemini-cli',
    dir: '.gemini',
    write: 'write_file',
    shell: 'run_shell_command',
    pathKey: 'file_path',
    dirKey: 'dir_path',
  },
  {
    agent: 'qwen-code',
    dir: '.qwen',
    write: 'write_file',
    shell: 'run_shell_command',
    pathKey: 'file_path',
    dirKey: 'directory',
  },
] as const;

describe('Gemini CLI and Qwen Code under Tally (real CLIs, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  for (const a of AGENTS) {
    it(`${a.agent}: tally run records and controls the session; the receipt matches the disk`, (t) =>
      checkTallyRun(t, a));

    it(`${a.agent}: tally install writes hooks the real CLI loads and obeys; uninstall removes only them`, async (t) => {
      const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
      const home = makeTempDir('tally-home');
      try {
        const project = await tallyProject(repo.dir, home);
        // The user's own settings in the project: a key and a hook of theirs, kept through both.
        const userHook = { type: 'command', command: 'true' };
        const settingsPath = join(repo.dir, a.dir, 'settings.json');
        mkdirSync(join(repo.dir, a.dir));
        const mine = { ui: { theme: 'Default' }, hooks: { SessionStart: [{ hooks: [userHook] }] } };
        // Written by hand, with a comment (both CLIs strip comments before parsing): edited in place.
        const handWritten = `{\r\n\t// my settings\r\n\t"ui": {"theme": "Default"},\r\n\t"hooks": {"SessionStart": [{"hooks": [${JSON.stringify(userHook)}]}]}\r\n}\r\n`;
        writeFileSync(settingsPath, handWritten);
        const installed = await project.tally(['install', a.agent, '--agent', 'coder', '--json']);
        assert.equal(installed.code, 0, installed.stderr);
        const report = JSON.parse(installed.stdout) as { cannot_express: string[]; hooks: unknown[] };
        assert.ok(report.cannot_express.length > 0);
        const run = await runAgent({
          agent: a.agent,
          cwd: repo.dir,
          prompt: 'Write a.txt and b.txt, then protected/a.',
          script: script(repo.dir, a),
          env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
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
        // The recorder holds (or has sealed) the session its hooks opened.
        const status = await project.tally(['recorder', 'status', '--json']);
        t.diagnostic(status.stdout.slice(0, 600));
        const uninstalled = await project.tally(['uninstall', a.agent]);
        assert.equal(uninstalled.code, 0, uninstalled.stderr);
        // Gemini CLI's file comes back byte for byte. Qwen Code stamps the file with its own settings
        // version when it loads it, and writes it out in its own layout (the comment kept).
        const left = readFileSync(settingsPath, 'utf8');
        if (a.agent === 'gemini-cli') assert.equal(left, handWritten);
        const value = plain(readJsonc(left, 'json-comments')) as Record<string, unknown>;
        delete value.$version;
        assert.deepEqual(value, mine);
        assert.match(left, /\/\/ my settings/);
      } finally {
        await stopRecorder(repo.dir, home);
        repo.cleanup();
        removeTempDir(home);
      }
    });
  }

  it('qwen-code: a subagent pinned to a worktree in protected/ is judged where it runs', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
    const home = makeTempDir('tally-home');
    const wt = join(repo.dir, 'protected', 'wt');
    repo.git('worktree', 'add', '-q', wt);
    try {
      const project = await tallyProject(repo.dir, home, allowing('agent'));
      const run = await runAgent({
        agent: 'qwen-code',
        cwd: repo.dir,
        prompt: 'Have a subagent write in the worktree.',
        script: {
          steps: [
            call('agent', {
              description: 'write in the worktree',
              prompt: 'SUBTASK: write sa.txt',
              subagent_type: 'general-purpose',
              working_dir: wt,
              run_in_background: false,
            }),
            text('Done.'),
          ],
          threads: [
            {
              match: 'SUBTASK',
              steps: [
                call('run_shell_command', { command: 'echo x > sa.txt', description: 'write' }),
                text('ok'),
              ],
            },
          ],
        },
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      // Without Tally the subagent's command wrote protected/wt/sa.txt (its hook said the project dir).
      assert.equal(existsSync(join(wt, 'sa.txt')), false, 'the subagent wrote nothing in protected/');
      assert.ok(toolResults(run).some((r) => r.includes(REASON)));
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      const denied = deniedRecords(String(summary.package));
      assert.deepEqual(
        denied.map((r) => [asRecord(asRecord(r.event)?.session)?.cwd, asRecord(r.decision)?.rule]),
        [[wt, 'Write(protected/**)']],
      );
      await verifiedUnderCertificate(project, String(summary.package));
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
  it('qwen-code: a path with `..` after a link is judged where the kernel takes it', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
    const home = makeTempDir('tally-home');
    const certificate = ['--allow', 'Bash', '--allow', 'Write(**)', '--allow', 'Edit(**)'];
    certificate.push('--forbid', 'Write(protected/**)');
    // `lnk/..` is `x` to the kernel and `.` as text: `lnk/../y` is protected/ to the first.
    const links = 'mkdir -p x/d && ln -s ../protected x/y && ln -s x/d lnk';
    try {
      const project = await tallyProject(repo.dir, home, certificate);
      const run = await runAgent({
        agent: 'qwen-code',
        cwd: repo.dir,
        prompt: 'Write through a link.',
        script: [
          call('run_shell_command', { command: links, description: 'links' }),
          // Qwen hands an absolute path to the file system as given (measured: it wrote protected/).
          call('write_file', { file_path: `${repo.dir}/lnk/../y/tool.txt`, content: 'x\n' }),
          call('run_shell_command', { command: 'echo x > lnk/../y/shell.txt', description: 'w' }),
          call('write_file', { file_path: `${repo.dir}/ok.txt`, content: 'ok\n' }),
          text('Done.'),
        ],
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      for (const f of ['tool.txt', 'shell.txt'])
        assert.equal(existsSync(join(repo.dir, 'protected', f)), false, `protected/${f} was written`);
      assert.equal(readFileSync(join(repo.dir, 'ok.txt'), 'utf8'), 'ok\n');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      const denied = deniedRecords(String(summary.package));
      assert.deepEqual(
        denied.map((r) => asRecord(r.decision)?.rule),
        ['Write(protected/**)', 'Write(protected/**)'],
      );
      await verifiedUnderCertificate(project, String(summary.package));
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
