/**
 * `tally install codex`'s trust step against the real pinned Codex (its app-server only, no model):
 * what Codex itself lists afterwards (`hooks/list`) is the oracle. Tally's hooks are trusted and
 * on; a hook another process put into the file between Tally's write and Codex's listing is not
 * trusted, even with `tally hook codex` in its command; a Tally hook that config.toml switched off
 * (`enabled = false`, which Codex skips even when trusted) is switched on, not reported as running;
 * and a `$CODEX_HOME` that is a link (Codex names its hooks by the folder it leads to) is trusted.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type CodexHookEntry, listCodexHooks } from '../../src/capture/codex/trust.js';
import { jsonOut, runTally } from '../cli/tally-process.js';
import { ensureAgent } from './install.js';
import { makeRepo } from './repo.js';
import { makeTempDir, removeTempDir } from './temp.js';

/** A home with a git work tree, Tally's home and Codex's, and what to run `tally` and Codex with. */
async function setup(link = false) {
  const codex = await ensureAgent('codex');
  const home = makeTempDir('tally-codex-trust');
  const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
  const real = join(home, link ? 'dotfiles-codex' : '.codex');
  mkdirSync(real);
  if (link) symlinkSync(real, join(home, 'codex-link'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    TALLY_HOME: join(home, 'tally'),
    CODEX_HOME: link ? join(home, 'codex-link') : real,
  };
  const install = async (bin = codex.bin) =>
    runTally(['install', 'codex', '--agent-bin', bin, '--json'], { cwd: repo.dir, env });
  const listed = () => listCodexHooks(codex.bin, env, repo.dir);
  const cleanup = () => {
    repo.cleanup();
    removeTempDir(home);
  };
  return { codex, home, real, env, install, listed, cleanup };
}

const tallys = (hooks: CodexHookEntry[]) => hooks.filter((h) => h.command?.includes(' codex --fail '));

describe('tally install codex: the trust step, with the real Codex', () => {
  it('trusts only the handlers it wrote: a hook added to the file before Codex lists it stays untrusted', async () => {
    const s = await setup();
    try {
      // The agent-bin edits the hooks file Tally just wrote (as a concurrent process could), then
      // is Codex.
      const wrapper = join(s.home, 'codex-after-an-edit');
      const edit = `const fs = require('fs'); const p = process.env.CODEX_HOME + '/hooks.json';
const j = JSON.parse(fs.readFileSync(p, 'utf8'));
j.hooks.PreToolUse.push({ hooks: [{ type: 'command', command: 'touch planted # tally hook codex' }] });
fs.writeFileSync(p, JSON.stringify(j));`;
      writeFileSync(
        wrapper,
        `#!/bin/sh\n'${process.execPath}' -e "$EDIT" || exit 7\nexec '${s.codex.bin}' "$@"\n`,
      );
      chmodSync(wrapper, 0o755);
      s.env.EDIT = edit;
      const ran = await s.install(wrapper);
      const hooks = await s.listed();
      const planted = hooks.filter((h) => h.command === 'touch planted # tally hook codex');
      assert.equal(planted.length, 1, JSON.stringify(hooks));
      assert.equal(planted[0]!.trustStatus, 'untrusted', 'the planted hook was trusted');
      const ours = tallys(hooks).filter((h) => h !== planted[0]);
      assert.equal(ours.length, 8);
      assert.ok(ours.every((h) => h.trustStatus === 'trusted' && h.enabled));
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(jsonOut(ran).trust, 'trusted');
    } finally {
      s.cleanup();
    }
  });

  it('switches on its own hook that config.toml switched off, instead of reporting it as running', async () => {
    const s = await setup();
    try {
      assert.equal((await s.install()).code, 0);
      const pre = (await s.listed()).find((h) => h.eventName === 'preToolUse')!;
      // Into the table where Codex keeps the hook's trust, as its /hooks screen's switch does.
      const config = join(s.real, 'config.toml');
      const table = `[hooks.state."${pre.key}"]\n`;
      const text = readFileSync(config, 'utf8');
      assert.ok(text.includes(table), text);
      writeFileSync(config, text.replace(table, `${table}enabled = false\n`));
      assert.equal((await s.listed()).find((h) => h.key === pre.key)!.enabled, false);
      const ran = await s.install();
      const ours = tallys(await s.listed());
      assert.equal(ours.length, 8);
      assert.deepEqual(
        ours.filter((h) => !(h.trustStatus === 'trusted' && h.enabled)).map((h) => h.key),
        [],
        `install said: ${ran.stdout}`,
      );
      assert.equal(ran.code, 0, ran.stderr);
    } finally {
      s.cleanup();
    }
  });

  it('trusts its hooks in a CODEX_HOME that is a link', async () => {
    const s = await setup(true);
    try {
      const ran = await s.install();
      const ours = tallys(await s.listed());
      assert.equal(ours.length, 8);
      assert.ok(ours.every((h) => h.trustStatus === 'trusted' && h.enabled));
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(jsonOut(ran).trust, 'trusted');
      assert.match(readFileSync(join(s.real, 'hooks.json'), 'utf8'), /tally-hook|tally\.js/);
    } finally {
      s.cleanup();
    }
  });
});
