/**
 * Which shim command hooks run: bin/tally-hook run by bash where bash opens /dev/tcp (one bash per
 * hook), by sh where this machine has sh and curl (one sh and one curl), the Node shim otherwise or
 * when asked; and Tally's installers know every form as their own, so uninstall removes any.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isShimCommand, shimCommand } from '../../src/capture/plan.js';
import { hookShim } from '../../src/cli/agent-hooks.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-shim-choice-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function pathWith(tools: string[]): string {
  const bin = join(dir, tools.join('-') || 'none');
  mkdirSync(bin, { recursive: true });
  for (const tool of tools) writeFileSync(join(bin, tool), '#!/bin/sh\n', { mode: 0o755 });
  return bin;
}

/** What this machine's bash says when asked for a connection nothing listens on. */
const bashTcp =
  existsSync('/bin/bash') &&
  /refused/i.test(
    spawnSync('/bin/bash', ['-c', 'exec 3<>/dev/tcp/127.0.0.1/1'], { encoding: 'utf8' }).stderr,
  );

describe('the command hooks’ shim', () => {
  it('is the shim run by bash, with its node, where bash opens /dev/tcp (curl or not)', (t) => {
    if (!bashTcp) return t.skip('this bash cannot open /dev/tcp');
    for (const tools of [['curl'], []]) {
      const shim = hookShim({ PATH: pathWith(tools) });
      assert.match(shim ?? '', /^\/bin\/bash '[^']*\/bin\/tally-hook' --node '[^']*'$/);
      assert.ok(shim!.endsWith(`'${process.execPath}'`));
    }
  });

  it('is the sh shim, with its node, when curl is on the PATH and bash is not asked for', () => {
    const sh = hookShim({ PATH: pathWith(['curl']), TALLY_HOOK_SHIM: 'sh' });
    assert.ok(sh, 'a curl on the PATH');
    assert.match(sh, /^'[^']*\/bin\/tally-hook' --node '[^']*'$/);
    assert.ok(sh.endsWith(`'${process.execPath}'`));
  });

  it('is the Node shim with TALLY_HOOK_SHIM=node, or without bash’s /dev/tcp and curl', () => {
    assert.equal(hookShim({ PATH: pathWith([]), TALLY_HOOK_SHIM: 'sh' }), undefined);
    assert.equal(hookShim({ PATH: pathWith(['curl']), TALLY_HOOK_SHIM: 'node' }), undefined);
    // Not executable: not a program.
    const bin = join(dir, 'plain');
    mkdirSync(bin);
    writeFileSync(join(bin, 'curl'), '', { mode: 0o644 });
    assert.equal(hookShim({ PATH: bin, TALLY_HOOK_SHIM: 'sh' }), undefined);
  });

  it('both forms of the command are Tally’s, for that channel only', () => {
    const sh = `'/opt/tally/bin/tally-hook' --node '/usr/bin/node'`;
    const viaSh = shimCommand("'/usr/bin/node' '/opt/tally/bin/tally.js'", 'codex', true, 'coder', sh);
    assert.equal(viaSh, `${sh} codex --fail closed --agent coder`);
    const viaNode = shimCommand("'/usr/bin/node' '/opt/tally/bin/tally.js'", 'codex', false);
    assert.equal(viaNode, `'/usr/bin/node' '/opt/tally/bin/tally.js' hook codex --fail open`);
    for (const command of [
      viaSh,
      viaNode,
      `/bin/bash ${viaSh}`,
      '/x/tally-hook gemini-cli --fail open'.replace('gemini-cli', 'codex'),
    ]) {
      assert.ok(isShimCommand(command, 'codex'), command);
      assert.ok(!isShimCommand(command, 'gemini-cli'), command);
    }
    assert.ok(!isShimCommand('/x/not-tally-hook codex', 'codex'));
    assert.ok(!isShimCommand('my-tally-hook codex', 'codex'));
  });
});
