/**
 * Codex under Tally, the real pinned CLI against a scripted model. `tally install codex` writes
 * hooks and has Codex itself trust them (its app-server, as its /hooks screen does — never the
 * bypass flag); `tally run -- codex` does the same for one run in a config home of its own. Every
 * file an apply_patch adds, updates, moves or deletes is a judged and recorded write; a forbidden
 * patch and a forbidden redirection are stopped before they run, with Tally's reason in what the
 * model sees; the package verifies and its receipt matches the disk. A command the agent could
 * type into later with `write_stdin` (which fires no hook) is refused as opaque.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TALLY_BIN } from '../cli/tally-process.js';
import { call, type Step, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  asArray,
  asRecord,
  deniedRecords,
  packageRecords,
  receiptOf,
  runSummary,
  tallyProject,
  toolResults,
  underTallyRun,
  verifiedUnderCertificate,
} from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const REASON = 'forbidden pattern';
const ADD = '*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** Add File: c.txt\n+gamma\n*** End Patch\n';
const MOVE =
  '*** Begin Patch\n*** Update File: c.txt\n*** Move to: d.txt\n@@\n-gamma\n+delta\n*** Delete File: old.txt\n*** End Patch\n';
const FORBIDDEN = '*** Begin Patch\n*** Add File: protected/p.txt\n+nope\n*** End Patch\n';
// Codex trims each line before it looks for a header: indented headers are headers to it.
const INDENTED =
  '*** Begin Patch\n*** Add File: e.txt\n+e\n *** Add File: protected/space.txt\n+nope\n\t*** Add File: protected/tab.txt\n+nope\n*** End Patch\n';

function script(dir: string) {
  return [
    call('apply_patch', ADD),
    call('apply_patch', MOVE),
    call('exec_command', { cmd: 'echo beta > b.txt', workdir: dir }),
    call('exec_command', { cmd: 'echo x > protected/a', workdir: dir }),
    call('apply_patch', FORBIDDEN),
    call('apply_patch', INDENTED),
    text('Done.'),
  ];
}

function assertDisk(dir: string): void {
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'alpha\n');
  assert.equal(readFileSync(join(dir, 'd.txt'), 'utf8'), 'delta\n');
  assert.equal(existsSync(join(dir, 'c.txt')), false, 'moved away');
  assert.equal(existsSync(join(dir, 'old.txt')), false, 'deleted');
  assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'beta\n');
  assert.equal(existsSync(join(dir, 'protected/a')), false, 'the forbidden redirection did not run');
  assert.equal(existsSync(join(dir, 'protected/p.txt')), false, 'the forbidden patch did not run');
  for (const f of ['e.txt', 'protected/space.txt', 'protected/tab.txt'])
    assert.equal(existsSync(join(dir, f)), false, `${f}: the patch with indented headers ran`);
}

describe('Codex under Tally (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('tally run -- codex: trusted hooks for the run only; patches judged and recorded file by file', async (t) => {
    const repo = makeRepo({
      files: { 'README.md': '# demo\n', 'old.txt': 'old\n', 'protected/keep.txt': 'k\n' },
    });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home);
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Patch, move, write, then protected.',
        script: script(repo.dir),
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
        collect: ['.codex'],
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-800)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.doesNotMatch(run.stdout, /Enabled hooks may run without review/, 'no bypass');
      // The user's Codex config was not edited: no trust recorded in it.
      assert.doesNotMatch(run.collected['.codex/config.toml'] ?? '', /trusted_hash/);
      assert.equal(run.collected['.codex/hooks.json'], undefined, 'no hooks file left in the user’s home');
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      assertDisk(repo.dir);
      const results = toolResults(run);
      t.diagnostic(`tool results: ${results.join(' | ').slice(0, 900)}`);
      assert.equal(results.filter((r) => r.includes(REASON)).length, 3, results.join('\n'));
      const denied = deniedRecords(String(summary.package));
      assert.deepEqual(
        denied.map((r) => asRecord(r.decision)?.rule),
        ['Write(protected/**)', 'Write(protected/**)', 'Write(protected/**)'],
      );
      const receipt = await receiptOf(project, String(summary.package));
      const written = asArray(receipt.files_written).map((f) => {
        const row = asRecord(f) ?? {};
        return `${String(row.operation)} ${String(row.path)}${row.from ? ` from ${String(row.from)}` : ''}`;
      });
      t.diagnostic(`files_written ${JSON.stringify(written)}`);
      // Net operations over the session: c.txt was added by one patch and moved to d.txt by the next,
      // so the receipt shows d.txt created and no c.txt (the call rows keep each patch's own files).
      for (const row of ['created a.txt', 'created d.txt', 'deleted old.txt', 'created b.txt'])
        assert.ok(written.includes(row), `${row} in ${JSON.stringify(written)}`);
      assert.ok(!written.some((w) => w.endsWith(' c.txt')), JSON.stringify(written));
      assert.ok(!written.some((w) => w.includes('protected/')), JSON.stringify(written));
      const commands = asArray(receipt.processes).map((p) => String(asRecord(p)?.command));
      assert.deepEqual(commands, ['echo beta > b.txt']);
      await verifiedUnderCertificate(project, String(summary.package));
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });

  it('tally install codex trusts only its own hooks through Codex; they fire and deny; uninstall removes only them', async (t) => {
    const repo = makeRepo({
      files: { 'README.md': '# demo\n', 'old.txt': 'old\n', 'protected/keep.txt': 'k\n' },
    });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home);
      // The user's own hook: Tally must not trust it behind their back.
      const mine = { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] } };
      // Install into the run's own CODEX_HOME (where the scripted provider is configured), run
      // Codex, then uninstall: each step's output kept in the run's home for the checks below.
      const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
      const tally = `${q(process.execPath)} ${q(TALLY_BIN)}`;
      const steps = [
        'mkdir -p "$HOME/out"',
        `${tally} install codex --agent coder --agent-bin "$0" --json > "$HOME/out/install.json" 2> "$HOME/out/install.err" || exit 90`,
        'cp "$CODEX_HOME/config.toml" "$HOME/out/config.toml"',
        '"$0" "$@"; code=$?',
        `${tally} uninstall codex > /dev/null 2>&1 || exit 91`,
        'exit $code',
      ].join('\n');
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Patch, move, write, then protected.',
        script: script(repo.dir),
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        files: { '.codex/hooks.json': JSON.stringify(mine) },
        wrap: (bin, argv) => ['/bin/sh', ['-c', steps, bin, ...argv]],
        collect: ['out', '.codex'],
      });
      t.diagnostic(`exit ${run.exitCode}; install: ${run.collected['out/install.err']?.slice(0, 600)}`);
      assert.equal(run.exitCode, 0, `${run.stderr}\n${run.collected['out/install.err']}`);
      const report = JSON.parse(run.collected['out/install.json']!) as { trust: string; hooks: unknown[] };
      assert.equal(report.trust, 'trusted');
      const config = run.collected['out/config.toml']!;
      // Codex recorded one trusted hash per Tally hook (six events) and none for the user's hook
      // (its Stop hook is group 0; Tally's Stop hook comes after it, group 1).
      assert.equal(config.match(/trusted_hash/g)?.length, report.hooks.length, config);
      assert.doesNotMatch(config, /:stop:0:0"/);
      assert.match(config, /:stop:1:0"/);
      assert.doesNotMatch(run.stdout, /Enabled hooks may run without review/, 'no bypass');
      assertDisk(repo.dir);
      assert.equal(toolResults(run).filter((r) => r.includes(REASON)).length, 3);
      // Uninstall left the user's hooks file as it was.
      assert.deepEqual(JSON.parse(run.collected['.codex/hooks.json']!), mine);
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });

  it('tally run -- codex: a shell on a terminal, which write_stdin would type into unjudged, is refused', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'k\n' } });
    const home = makeTempDir('tally-home');
    // The finding's certificate: any shell command, *.txt writes, nothing into protected/.
    const certificate = ['--allow', 'Bash', '--allow', 'Write(*.txt)', '--allow', 'Edit(*.txt)'];
    certificate.push('--forbid', 'Write(protected/**)');
    // The session id of the shell the first call started, when it started one.
    const typed = (request: Record<string, unknown>): Record<string, unknown> => {
      const outputs = asArray(request.input).map((i) => asRecord(i) ?? {});
      const shown = String(outputs.find((i) => i.call_id === 'call_m_0_0' && i.output)?.output ?? '');
      const session = Number(/session ID (\d+)/.exec(shown)?.[1] ?? 1000);
      return {
        session_id: session,
        chars: 'echo viastdin > protected/stdin.txt; exit\n',
        yield_time_ms: 1000,
      };
    };
    const steps: Step[] = [
      call('exec_command', { cmd: 'bash', tty: true, workdir: repo.dir, yield_time_ms: 500 }),
      { calls: [{ tool: 'write_stdin', input: {}, inputFrom: typed }] },
      call('exec_command', { cmd: 'git log --oneline', tty: true, workdir: repo.dir }),
      call('exec_command', { cmd: 'echo ok > ok.txt', tty: true, workdir: repo.dir }),
      call('exec_command', { cmd: 'git log --oneline -1 > log.txt', workdir: repo.dir }),
      text('Done.'),
    ];
    try {
      const project = await tallyProject(repo.dir, home, certificate);
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Open a shell and type into it.',
        script: steps,
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-800)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      // The disk: nothing was typed into a shell; the allowed commands ran.
      assert.equal(existsSync(join(repo.dir, 'protected/stdin.txt')), false, 'write_stdin reached no shell');
      assert.equal(readFileSync(join(repo.dir, 'ok.txt'), 'utf8'), 'ok\n');
      assert.ok(readFileSync(join(repo.dir, 'log.txt'), 'utf8').length > 0, 'git log without a terminal ran');
      const results = toolResults(run);
      t.diagnostic(`tool results: ${results.join(' | ').slice(0, 1200)}`);
      // The records: the model's own calls, with the tty Codex's hook leaves out; both terminals refused.
      const records = packageRecords(String(summary.package));
      const refused = records
        .filter((r) => asRecord(r.decision)?.decision === 'ask' || asRecord(r.decision)?.decision === 'deny')
        .map((r) => asRecord(asRecord(r.event)?.tool) ?? {});
      assert.deepEqual(
        refused.map((tool) => [tool.name, asRecord(tool.input)?.command, asRecord(tool.input)?.tty]),
        [
          ['exec_command', 'bash', true],
          ['exec_command', 'git log --oneline', true],
        ],
      );
      assert.equal(results.filter((r) => r.includes('type into later')).length, 2, results.join('\n'));
      // Every call's tty came from the rollout, none was assumed.
      const found = records
        .filter((r) => asRecord(asRecord(r.event)?.tool)?.name === 'exec_command')
        .map((r) => asRecord(asRecord(asRecord(r.event)?.extensions)?.['dev.tally.native'])?.rollout_call);
      assert.ok(found.length >= 4 && found.every((f) => f === 'found'), JSON.stringify(found));
      await verifiedUnderCertificate(project, String(summary.package));
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
  it('tally run -- codex: `cd DIR && apply_patch`, which Codex applies in DIR as written, is judged there', async (t) => {
    const repo = makeRepo({
      files: { 'README.md': '# demo\n', 'protected/keep.txt': 'k\n', 'sub/keep.txt': 'k\n' },
    });
    const home = makeTempDir('tally-home');
    const certificate = ['--allow', 'Bash', '--allow', 'Write(**)', '--allow', 'Edit(**)'];
    certificate.push('--forbid', 'Write(protected/**)');
    const patch = (file: string) =>
      `<<'EOF'\n*** Begin Patch\n*** Add File: ${file}\n+x\n*** End Patch\nEOF\n`;
    // Codex reads the cd's word as its grammar has it written (codex-rs/apply-patch invocation.rs):
    // `safe\x` and "safe\$x" are folders of those names to it, `safex` and `safe$x` to bash.
    const steps: Step[] = [
      call('exec_command', {
        cmd: "ln -s protected 'safe\\x'; ln -s protected 'safe\\$x'",
        workdir: repo.dir,
      }),
      call('exec_command', { cmd: `cd safe\\x && apply_patch ${patch('word.txt')}`, workdir: repo.dir }),
      call('exec_command', { cmd: `cd "safe\\$x" && apply_patch ${patch('quoted.txt')}`, workdir: repo.dir }),
      call('exec_command', { cmd: `cd sub && apply_patch ${patch('ok.txt')}`, workdir: repo.dir }),
      text('Done.'),
    ];
    try {
      const project = await tallyProject(repo.dir, home, certificate);
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Patch through a folder.',
        script: steps,
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        wrap: underTallyRun,
      });
      t.diagnostic(
        `exit ${run.exitCode} in ${run.durationMs} ms; tool results: ${toolResults(run).join(' | ').slice(0, 1200)}`,
      );
      assert.equal(run.exitCode, 0, run.stderr);
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      for (const f of ['word.txt', 'quoted.txt'])
        assert.equal(existsSync(join(repo.dir, 'protected', f)), false, `protected/${f} was written`);
      assert.equal(readFileSync(join(repo.dir, 'sub/ok.txt'), 'utf8'), 'x\n');
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
