/**
 * `tally install opencode` (project scope) writes Tally's plugin into the project, and `tally
 * uninstall opencode` removes it from there — never through a link the agent could have made in
 * the project: `.opencode` leading to another folder, or `.opencode/plugin` leading to the user's
 * own plugin folder, is refused before anything is written or removed, naming the file and where it
 * really is. A link that stays inside the project is followed as before. Oracle: the files on disk.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeProject } from './tally-process.js';

function project(prefix: string) {
  const p = makeProject(prefix);
  p.env.XDG_CONFIG_HOME = join(p.dir, 'config');
  return p;
}

describe('OpenCode plugin: the project scope stays in the project', () => {
  it('a .opencode that leads out of the project is refused; nothing is written there', async () => {
    const p = project('tally-opencode-out-');
    const elsewhere = join(p.dir, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(p.root, '.opencode'));
    const ran = await p.tally(['install', 'opencode']);
    assert.equal(ran.code, 1, ran.stderr);
    assert.match(
      ran.stderr,
      /\.opencode\/plugin\/tally\.js is really .*elsewhere\/plugin\/tally\.js, outside the project/,
    );
    assert.match(ran.stderr, /nothing was changed/);
    assert.deepEqual(readdirSync(elsewhere), []);
  });

  it("a .opencode/plugin that leads to the user's plugin folder: neither install nor uninstall touch the user's plugin", async () => {
    const p = project('tally-opencode-user-');
    assert.equal((await p.tally(['install', 'opencode', '--scope', 'user', '--agent', 'mine'])).code, 0);
    const userDir = join(p.dir, 'config', 'opencode', 'plugin');
    const userPlugin = readFileSync(join(userDir, 'tally.js'), 'utf8');
    mkdirSync(join(p.root, '.opencode'));
    symlinkSync(userDir, join(p.root, '.opencode', 'plugin'));
    const installed = await p.tally(['install', 'opencode', '--agent', 'other']);
    assert.equal(installed.code, 1, installed.stderr);
    assert.match(installed.stderr, /outside the project/);
    assert.equal(readFileSync(join(userDir, 'tally.js'), 'utf8'), userPlugin);
    const removed = await p.tally(['uninstall', 'opencode']);
    assert.equal(removed.code, 1, removed.stderr);
    assert.match(removed.stderr, /outside the project/);
    assert.equal(readFileSync(join(userDir, 'tally.js'), 'utf8'), userPlugin);
  });

  it('a .opencode that leads to a folder inside the project is written and removed as before', async () => {
    const p = project('tally-opencode-in-');
    const shared = join(p.root, 'shared-opencode');
    mkdirSync(shared);
    symlinkSync(shared, join(p.root, '.opencode'));
    assert.equal((await p.tally(['install', 'opencode'])).code, 0);
    assert.ok(existsSync(join(shared, 'plugin', 'tally.js')));
    assert.equal((await p.tally(['uninstall', 'opencode'])).code, 0);
    assert.ok(!existsSync(join(shared, 'plugin', 'tally.js')));
  });
});
