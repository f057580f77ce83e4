/**
 * What the agent can leave where an installer reads: a FIFO (reading one waits for a writer that
 * never comes), a folder where a file should be, a file where a folder should be. `tally install`,
 * `tally uninstall` and `tally run`'s check of the agent's settings refuse each at once, naming the
 * file and what it is, and change nothing — they do not hang or fail with a stack trace. Oracle:
 * the exit status within a deadline, stderr naming the path, and the files on disk.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeProject } from './tally-process.js';

const mkfifo = (path: string) => execFileSync('mkfifo', [path]);
const DEADLINE = { timeout: 30_000 };

describe('installers and odd files in their place', () => {
  it('a FIFO as OpenCode’s plugin: install and uninstall refuse it, naming it', DEADLINE, async () => {
    const p = makeProject('tally-odd-fifo-');
    const plugin = join(p.root, '.opencode', 'plugin', 'tally.js');
    mkdirSync(join(plugin, '..'), { recursive: true });
    mkfifo(plugin);
    for (const verb of ['install', 'uninstall']) {
      const ran = await p.tally([verb, 'opencode']);
      assert.equal(ran.code, 2, ran.stderr);
      assert.match(ran.stderr, /plugin\/tally\.js is a FIFO, not a regular file/);
      assert.doesNotMatch(ran.stderr, /\n\s+at /, 'no stack trace');
    }
  });

  it(
    'a FIFO among OpenCode’s plugins: tally run refuses it as another party’s plugin instead of hanging',
    DEADLINE,
    async () => {
      const p = makeProject('tally-odd-run-');
      assert.equal((await p.tally(['init'])).code, 0);
      const other = join(p.root, '.opencode', 'plugins', 'other.js');
      mkdirSync(join(other, '..'), { recursive: true });
      mkfifo(other);
      const ran = await p.tally(['run', '--harness', 'opencode', '--', 'true']);
      assert.equal(ran.code, 2, ran.stderr);
      assert.ok(ran.stderr.includes(other), ran.stderr);
    },
  );

  it('a FIFO as a settings file tally run reads: refused, naming it', DEADLINE, async () => {
    const p = makeProject('tally-odd-settings-');
    assert.equal((await p.tally(['init'])).code, 0);
    mkdirSync(join(p.root, '.claude'));
    mkfifo(join(p.root, '.claude', 'settings.json'));
    const ran = await p.tally(['run', '--', 'claude', '-p', 'x']);
    assert.equal(ran.code, 2, ran.stderr);
    assert.match(ran.stderr, /\.claude\/settings\.json is a FIFO, not a regular file/);
  });

  it(
    'a folder as Codex’s hooks.json, a file as OpenCode’s plugin folder: refused, naming them, nothing written',
    DEADLINE,
    async () => {
      const p = makeProject('tally-odd-kinds-');
      const hooks = join(p.dir, '.codex', 'hooks.json');
      mkdirSync(hooks, { recursive: true });
      const codex = await p.tally(['install', 'codex', '--agent-bin', '/bin/false']);
      assert.equal(codex.code, 2, codex.stderr);
      assert.match(codex.stderr, /\.codex\/hooks\.json is a directory, not a regular file/);
      assert.deepEqual(readdirSync(hooks), []);
      mkdirSync(join(p.root, '.opencode'));
      writeFileSync(join(p.root, '.opencode', 'plugin'), 'mine\n');
      const opencode = await p.tally(['install', 'opencode']);
      assert.equal(opencode.code, 2, opencode.stderr);
      assert.match(opencode.stderr, /\.opencode\/plugin: cannot make this folder \(EEXIST/);
      assert.doesNotMatch(opencode.stderr, /\n\s+at /, 'no stack trace');
      assert.ok(!existsSync(join(p.root, '.opencode', 'plugin.tmp')));
    },
  );
});
