/**
 * `--help` reaches the subcommand it follows: `tally ahp <sub> --help` prints that subcommand's
 * own usage (flags, exit codes), `tally ahp --help` the group's list, each on stdout with exit 0.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SUBCOMMANDS = ['validate', 'dispatch', 'serve', 'capabilities'];

function tally(...args: string[]) {
  return spawnSync(process.execPath, ['bin/tally.js', ...args], { cwd: ROOT, encoding: 'utf8' });
}

test('tally ahp <sub> --help prints the subcommand usage', () => {
  for (const sub of SUBCOMMANDS) {
    for (const flag of ['--help', '-h']) {
      const run = tally('ahp', sub, flag);
      assert.equal(run.status, 0, `${sub} ${flag}: ${run.stderr}`);
      assert.match(run.stdout, new RegExp(`^usage: tally ahp ${sub}\\b`), `${sub} ${flag}`);
    }
  }
  // Flags a user looks for in the subcommand's own text.
  assert.match(tally('ahp', 'dispatch', '--help').stdout, /--oauth-clients FILE/);
  assert.match(tally('ahp', 'serve', '--help').stdout, /--host H/);
  assert.match(tally('ahp', 'validate', '--help').stdout, /--admit/);
});

test('tally ahp --help lists every subcommand', () => {
  const run = tally('ahp', '--help');
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^usage: tally ahp </);
  for (const sub of SUBCOMMANDS) assert.match(run.stdout, new RegExp(`^  ${sub}\\b`, 'm'), sub);
});
