/**
 * Gemini CLI and Qwen Code under Tally, the real pinned CLIs against a scripted model: `tally
 * install` writes hooks the agent loads and obeys (and `tally uninstall` takes only them out),
 * and `tally run` wires them for one run. A write and a shell command that writes a file run; a
 * redirection into protected/ is stopped before it runs, and the model's tool result carries
 * Tally's reason; the package verifies and its receipt's files, processes and decisions are what
 * happened on disk.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

const AGENTS = [
  { agent: 'gemini-cli', dir: '.gemini', write: 'write_file', shell: 'run_shell_command' },
  { agent: 'qwen-code', dir: '.qwen', write: 'write_file', shell: 'run_shell_command' },
] as const;

function script(dir: string, a: (typeof AGENTS)[number]) {
  return [
    call(a.write, { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
    call(a.shell, { command: 'echo beta > b.txt', description: 'write b.txt' }),
    call(a.shell, { command: 'echo x > protected/a', description: 'write into protected' }),
    text('Done.'),
  ];
}

describe('Gemini CLI and Qwen Code under Tally (real CLIs, scripted model)', () => {
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
        // The user's own settings in the project: a key and a hook of theirs, kept through both.
        const userHook = { type: 'command', command: 'true' };
        const settingsPath = join(repo.dir, a.dir, 'settings.json');
        mkdirSync(join(repo.dir, a.dir));
        const mine = { ui: { theme: 'Default' }, hooks: { SessionStart: [{ hooks: [userHook] }] } };
        writeFileSync(settingsPath, JSON.stringify(mine));
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
        // Qwen Code stamps the file with its own settings version when it loads it; nothing else moved.
        const left = JSON.parse(readFileSync(settingsPath, 'utf8')) as Record<string, unknown>;
        if (a.agent === 'qwen-code') delete left.$version;
        assert.deepEqual(left, mine);
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
