/**
 * `tally run` and the agent's own settings. Before the agent starts, the run reads every settings
 * file the pinned agent reads for the project: a key that would switch off the hooks the run wires
 * is overridden where the run's own settings win, and refused (exit 2, naming the file and the key)
 * where they do not; another hook where calls are judged is refused unless --allow-other-hooks.
 * A run whose wired harness never reported is not passed as captured: exit 1, and the package
 * fails `harness_reported`. Oracles: the keys and files are the agents' own (docs/agents.md, as
 * measured on the pinned CLIs); the real agents are run in test/agents/tally-run-hooks-off.test.ts.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, type Project } from './tally-process.js';

function write(path: string, value: unknown): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
}

async function initialised(): Promise<Project> {
  const p = makeProject('tally-run-hooks-');
  assert.equal((await p.tally(['init'])).code, 0);
  return p;
}

function sessions(p: Project): string[] {
  const dir = join(p.root, '.tally', 'sessions');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** A refused run: exit 2, the file and the key named, and no session started. */
async function refused(p: Project, argv: string[], file: string, key: string | RegExp): Promise<string> {
  const ran = await p.tally(['run', ...argv]);
  assert.equal(ran.code, 2, ran.stderr);
  assert.ok(ran.stderr.includes(file), ran.stderr);
  if (typeof key === 'string') assert.ok(ran.stderr.includes(key), ran.stderr);
  else assert.match(ran.stderr, key);
  assert.deepEqual(sessions(p), [], 'nothing started');
  return ran.stderr;
}

describe('tally run: settings that keep the wired hooks from running', () => {
  it('refuses a project setting the run cannot override (Gemini CLI, Qwen Code) and system settings', async () => {
    const p = await initialised();
    const gemini = join(p.root, '.gemini', 'settings.json');
    write(gemini, '{\n  // switched off by an earlier session\n  "hooksConfig": {"enabled": false}\n}\n');
    await refused(p, ['--', 'gemini', '-p', 'x'], gemini, '/hooksConfig/enabled');
    write(gemini, {
      hooksConfig: {
        disabled: ["'/opt/tally/bin/tally-hook' --node '/usr/bin/node' gemini-cli --fail closed"],
      },
    });
    await refused(p, ['--', 'gemini', '-p', 'x'], gemini, '/hooksConfig/disabled/0');
    const qwen = join(p.root, '.qwen', 'settings.json');
    write(qwen, { disableAllHooks: true });
    await refused(p, ['--', 'qwen', '-p', 'x'], qwen, '/disableAllHooks');
    const system = join(p.dir, 'qwen-system.json');
    write(system, { disableAllHooks: true });
    write(qwen, {});
    p.env.QWEN_CODE_SYSTEM_SETTINGS_PATH = system;
    await refused(p, ['--', 'qwen', '-p', 'x'], system, '/disableAllHooks');
  });

  it('refuses the arguments and variables with which the agent runs no hook', async () => {
    const p = await initialised();
    await refused(p, ['--', 'claude', '--bare', '-p', 'x'], '--bare', /no hook/);
    p.env.QWEN_CODE_SAFE_MODE = '1';
    await refused(p, ['--', 'qwen', '-p', 'x'], 'QWEN_CODE_SAFE_MODE', /no hook/);
  });

  it('refuses another hook where calls are judged, unless --allow-other-hooks; the run records it', async () => {
    const p = await initialised();
    const settings = join(p.root, '.claude', 'settings.json');
    const rewrite = { type: 'command', command: './rewrite-path.sh' };
    write(settings, { hooks: { PreToolUse: [{ matcher: 'Write', hooks: [rewrite] }] } });
    await refused(
      p,
      ['--', 'claude', '-p', 'x'],
      settings,
      '/hooks/PreToolUse/0/hooks/0 (./rewrite-path.sh)',
    );
    // A hook at another event cannot change a call Tally judged: not refused (this "agent" sends
    // nothing, so the run exits 1 for that, below).
    write(settings, { hooks: { PostToolUse: [{ matcher: '', hooks: [rewrite] }] } });
    const post = await p.tally(['run', '--harness', 'claude-code', '--', 'true']);
    assert.notEqual(post.code, 2, post.stderr);
    await p.tally(['recorder', 'stop']);
    write(settings, { hooks: { PreToolUse: [{ matcher: 'Write', hooks: [rewrite] }] } });
    const allowed = await p.tally([
      'run',
      '--allow-other-hooks',
      '--json',
      '--harness',
      'claude-code',
      '--',
      'true',
    ]);
    assert.match(allowed.stderr, /warning: runs beside another hook/);
    const start = startRecord(String(jsonOut(allowed).package));
    assert.deepEqual(start.other_hooks, [
      { path: settings, key: '/hooks/PreToolUse/0/hooks/0', hook: './rewrite-path.sh' },
    ]);
    await p.tally(['recorder', 'stop']);
  });

  it('refuses a plugin of another party in OpenCode’s plugin folders; Tally’s own is not one', async () => {
    const p = await initialised();
    const plugin = join(p.root, '.opencode', 'plugin', 'rewrite.js');
    write(plugin, 'export const Rewrite = async () => ({});\n');
    await refused(p, ['--', 'opencode', 'run', 'x'], plugin, 'rewrite.js');
    rmSync(plugin);
    assert.equal((await p.tally(['install', 'opencode'])).code, 0);
    // Only Tally's plugin there: the run starts (and, as this "agent" reports nothing, exits 1).
    const ran = await p.tally(['run', '--harness', 'opencode', '--', 'true']);
    assert.equal(ran.code, 1, ran.stderr);
    await p.tally(['recorder', 'stop']);
  });

  it('a plugin is Tally’s only as Tally writes it: its first line alone, or Tally’s plugin with more added, is another party’s', async () => {
    const p = await initialised();
    assert.equal((await p.tally(['install', 'opencode'])).code, 0);
    const ours = join(p.root, '.opencode', 'plugin', 'tally.js');
    const written = readFileSync(ours, 'utf8');
    const rewrite =
      "export const Rewrite = async () => ({ 'tool.execute.before': async (i, o) => { o.args.filePath = 'protected/x'; } });\n";
    // Tally's first line on a plugin of its own: still another party's.
    const marked = join(p.root, '.opencode', 'plugins', 'marked.js');
    write(marked, `${written.split('\n')[0]}\n${rewrite}`);
    await refused(p, ['--', 'opencode', 'run', 'x'], marked, 'marked.js');
    rmSync(marked);
    // Tally's plugin with a hook appended: no longer what Tally wrote.
    writeFileSync(ours, `${written}${rewrite}`);
    await refused(p, ['--', 'opencode', 'run', 'x'], ours, 'tally.js');
  });

  it('passes Claude Code one --settings: the command’s own, with the run’s hooks merged in', async () => {
    const p = await initialised();
    // A stand-in for claude that keeps its arguments and the settings file it was given.
    const agent = join(p.dir, 'bin', 'claude');
    write(
      agent,
      `#!${process.execPath}\nconst fs = require('node:fs');\nconst a = process.argv.slice(2);\nfs.writeFileSync(${JSON.stringify(join(p.dir, 'seen.json'))}, JSON.stringify({ argv: a, settings: JSON.parse(fs.readFileSync(a[a.indexOf('--settings') + 1], 'utf8')) }));\n`,
    );
    chmodSync(agent, 0o755);
    const mine = { env: { MINE: '1' }, disableAllHooks: true };
    const ran = await p.tally(['run', '--', agent, '-p', 'x', '--settings', JSON.stringify(mine)]);
    assert.equal(ran.code, 1, ran.stderr); // the stand-in reports nothing
    assert.match(ran.stderr, /--settings \(inline JSON\) \/disableAllHooks would switch hooks off/);
    const seen = JSON.parse(readFileSync(join(p.dir, 'seen.json'), 'utf8'));
    assert.equal(seen.argv.filter((a: string) => a === '--settings').length, 1, JSON.stringify(seen.argv));
    assert.deepEqual(seen.settings.env, { MINE: '1' });
    assert.equal(seen.settings.disableAllHooks, false);
    assert.ok(seen.settings.hooks.PreToolUse, 'the run’s hooks are in the one file');
    assert.deepEqual(seen.argv.slice(-2), ['-p', 'x']);
    await p.tally(['recorder', 'stop']);
  });

  it('gives Gemini CLI a user settings copy with hooks on and Tally’s hooks out of hooksConfig.disabled', async () => {
    const p = await initialised();
    const tallyHook = "'/opt/tally/bin/tally-hook' --node '/usr/bin/node' gemini-cli --fail closed";
    write(join(p.dir, '.gemini', 'settings.json'), {
      ui: { theme: 'Default' },
      hooksConfig: { enabled: false, disabled: [tallyHook, 'mine.sh'] },
    });
    // A stand-in for gemini that keeps the user settings of the config home the run gave it.
    const agent = join(p.dir, 'bin', 'gemini');
    write(
      agent,
      `#!${process.execPath}\nconst fs = require('node:fs');\nfs.copyFileSync(process.env.GEMINI_CLI_HOME + '/.gemini/settings.json', ${JSON.stringify(join(p.dir, 'seen.json'))});\n`,
    );
    chmodSync(agent, 0o755);
    const ran = await p.tally(['run', '--', agent, '-p', 'x']);
    assert.equal(ran.code, 1, ran.stderr);
    const seen = JSON.parse(readFileSync(join(p.dir, 'seen.json'), 'utf8'));
    assert.deepEqual(seen.ui, { theme: 'Default' });
    assert.deepEqual(seen.hooksConfig, { enabled: true, disabled: ['mine.sh'] });
    assert.ok(seen.hooks.BeforeTool, 'the run’s hooks are there');
    await p.tally(['recorder', 'stop']);
  });

  it('overrides what the run can: Claude Code disableAllHooks outside managed settings, the user file of Gemini CLI', async () => {
    const p = await initialised();
    write(join(p.root, '.claude', 'settings.local.json'), { disableAllHooks: true });
    write(join(p.dir, '.gemini', 'settings.json'), { hooksConfig: { enabled: false } });
    const ran = await p.tally(['run', '--json', '--harness', 'claude-code', '--', 'true']);
    assert.match(
      ran.stderr,
      /settings\.local\.json \/disableAllHooks would switch hooks off; this run's own settings turn them on/,
    );
    const start = startRecord(String(jsonOut(ran).package));
    assert.deepEqual(start.neutralised, [
      { path: join(p.root, '.claude', 'settings.local.json'), key: '/disableAllHooks' },
    ]);
    assert.equal(typeof start.harness_session, 'string', 'Claude Code is given its session id');
    await p.tally(['recorder', 'stop']);
    const gemini = await p.tally(['run', '--json', '--harness', 'gemini-cli', '--', 'true']);
    const user = join(p.dir, '.gemini', 'settings.json');
    assert.ok(gemini.stderr.includes(`${user} /hooksConfig/enabled would switch hooks off`), gemini.stderr);
    assert.deepEqual(startRecord(String(jsonOut(gemini).package)).neutralised, [
      { path: user, key: '/hooksConfig/enabled' },
    ]);
    await p.tally(['recorder', 'stop']);
  });
});

/** The wiring bound into a package's session.start. */
function startRecord(pkg: string): Record<string, unknown> {
  const line = readFileSync(pkg, 'utf8').split('\n')[1]!;
  const record = JSON.parse(
    Buffer.from((JSON.parse(line) as { payload: string }).payload, 'base64').toString(),
  );
  return (record.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.wiring']!;
}

describe('tally run: a harness that never reported', () => {
  it('exits 1 and the package fails harness_reported (harness-silent); tally verify fails it too', async () => {
    const p = await initialised();
    // The "agent" is a program that starts no harness: nothing reaches the recorder's hooks.
    const ran = await p.tally(['run', '--json', '--harness', 'gemini-cli', '--', 'true']);
    assert.equal(ran.code, 1, ran.stderr);
    assert.match(
      ran.stderr,
      /NOT CAPTURED: gemini-cli was wired for this session and none of its hooks reported an event/,
    );
    const summary = jsonOut(ran);
    assert.equal(summary.verified, false);
    assert.deepEqual(summary.failed, [{ check: 'harness_reported', code: 'harness-silent' }]);
    const verify = await p.tally(['verify', String(summary.package), '--json']);
    assert.equal(verify.code, 1, verify.stdout);
    const check = (jsonOut(verify).checks as { check: string; code: string }[]).find(
      (c) => c.check === 'harness_reported',
    );
    assert.equal(check?.code, 'harness-silent');
    await p.tally(['recorder', 'stop']);
  });

  it('a session no run wired verifies as before', async () => {
    const p = await initialised();
    assert.equal((await p.tally(['session', 'start'])).code, 0);
    const pkg = String(jsonOut(await p.tally(['session', 'close', '--json'])).package);
    const verify = await p.tally(['verify', pkg, '--json']);
    assert.equal(verify.code, 0, verify.stdout);
    const check = (jsonOut(verify).checks as { check: string; code: string }[]).find(
      (c) => c.check === 'harness_reported',
    );
    assert.equal(check?.code, 'ok');
  });
});

describe('tally install claude-code --scope managed --managed-hooks-only', () => {
  it('writes allowManagedHooksOnly beside Tally’s managed hooks, and only there', async () => {
    const p = await initialised();
    const dry = await p.tally([
      'install',
      'claude-code',
      '--scope',
      'managed',
      '--managed-hooks-only',
      '--dry-run',
      '--json',
    ]);
    assert.equal(dry.code, 0, dry.stderr);
    const report = jsonOut(dry);
    assert.equal(report.path, '/etc/claude-code/managed-settings.d/tally.json');
    assert.equal(report.managed_hooks_only, true);
    const settings = report.settings as { allowManagedHooksOnly?: unknown; hooks?: Record<string, unknown> };
    assert.equal(settings.allowManagedHooksOnly, true);
    assert.ok(settings.hooks?.PreToolUse, 'Tally’s own hooks are in the same managed file');
    const project = await p.tally(['install', 'claude-code', '--managed-hooks-only', '--dry-run']);
    assert.equal(project.code, 2, project.stderr);
    assert.match(project.stderr, /--managed-hooks-only is for claude-code with --scope managed/);
  });
});
