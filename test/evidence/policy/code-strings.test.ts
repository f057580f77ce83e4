/**
 * Bash builtins that run text given to them as code: a trap's action, a completion or mapfile
 * callback, a prompt string, an array subscript evaluated by `let`, `declare`, `printf -v`, `read`,
 * `unset`, `test -v` or `((…))`, and what makes a later name run another program (`hash -p`,
 * `enable`, `alias`). Oracle: the real bash runs each proof (it creates a file), and the judge
 * must then not allow the same spelling with `rm -rf secret` in it. The harmless spellings stay
 * transparent.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';
import { splitShellCommand } from '../../../src/evidence/policy/shell.js';
import { shellFileEffects } from '../../../src/evidence/policy/shell-effects.js';
import { BYPASSES, HARMLESS } from './code-strings.js';

const POLICY = { allow: ['Bash'], forbid: ['Write(secret)', 'Write(secret/**)'], escalate: [] };

describe('builtins that run text are opaque or list what they run', () => {
  for (const { command } of BYPASSES) {
    test(command, () => {
      const effects = shellFileEffects(command, '/w');
      const listed = effects.writes.some((w) => w.path === 'secret' || w.path.startsWith('secret/'));
      assert.ok(effects.opaque || listed, JSON.stringify(splitShellCommand(command).commands));
      const verdict = evaluateAction(
        { ...POLICY, opaqueShell: 'deny' },
        { tool: 'Bash', input: { command }, cwd: '/w' },
      );
      assert.equal(verdict.verdict, 'forbidden', JSON.stringify(verdict));
      assert.notEqual(
        evaluateAction(POLICY, { tool: 'Bash', input: { command }, cwd: '/w' }).verdict,
        'allowed',
      );
    });
  }

  test('the opaque reason names the builtin', () => {
    const reason = (command: string) =>
      splitShellCommand(command).commands.find((c) => c.opaque)?.opaque ?? '';
    assert.match(reason('hash -p /bin/rm ls'), /^hash -p/);
    assert.match(reason('enable -f ./x.so x'), /^enable -f/);
    assert.match(reason('enable -n cd'), /^enable -n/);
    assert.match(reason(`alias ls='rm -rf'`), /^alias/);
    assert.match(reason(`mapfile -C f a`), /^mapfile -C/);
    assert.match(reason(`let 'a[$(id)]'`), /^let /);
    assert.match(reason(`printf -v 'a[$(id)]' x`), /^printf /);
    assert.match(reason(`read 'a[$(id)]'`), /^read /);
    assert.match(reason(`unset 'a[$(id)]'`), /^unset /);
    assert.match(reason(`test -v 'a[$(id)]'`), /^test /);
    assert.match(reason(`declare -i x='a[$(id)]'`), /^declare: /);
    assert.match(reason(`trap "$X" EXIT`), /^trap /);
    assert.match(reason(`PS4='$(id)'`), /^PS4 /);
  });

  test('a trap, an alias, a completion command and a prompt command list the commands written in them', () => {
    for (const command of [
      `trap 'rm -rf /' EXIT`,
      `alias x='rm -rf /'`,
      `compgen -C 'rm -rf /' x`,
      `PROMPT_COMMAND='rm -rf /'`,
      `export PROMPT_COMMAND='rm -rf /'`,
    ]) {
      const rm = splitShellCommand(command).commands.find((c) => c.invocation?.program === 'rm');
      assert.deepEqual(rm?.argv, ['rm', '-rf', '/'], command);
      assert.equal(
        evaluateAction(
          { ...POLICY, forbid: ['Bash(rm -rf *)'] },
          { tool: 'Bash', input: { command }, cwd: '/w' },
        ).verdict,
        'forbidden',
      );
    }
  });

  test('the forms already caught stay caught', () => {
    assert.equal(shellFileEffects('(( a[$(rm -rf secret)] ))', '/w').opaque, true);
    const listed = shellFileEffects('[[ -v a[$(rm -rf secret)] ]]', '/w');
    assert.ok(listed.writes.some((w) => w.path === 'secret'));
  });
});

describe('harmless builtin spellings stay transparent', () => {
  for (const command of HARMLESS) {
    test(command, () => {
      const opaque = splitShellCommand(command).commands.filter((c) => c.opaque !== undefined);
      assert.deepEqual(opaque, []);
      assert.equal(
        evaluateAction({ ...POLICY, opaqueShell: 'deny' }, { tool: 'Bash', input: { command }, cwd: '/w' })
          .verdict,
        'allowed',
      );
    });
  }
});

const bash = spawnSync('bash', ['-c', 'true']).status === 0;

describe('oracle: the real bash runs the text of each construct', { skip: !bash && 'no bash' }, () => {
  for (const { proof } of BYPASSES.filter((b) => b.proof !== '')) {
    test(proof, () => {
      const dir = mkdtempSync(join(tmpdir(), 'tally-code-strings-'));
      try {
        spawnSync('bash', ['-c', proof], { cwd: dir, stdio: 'ignore', timeout: 10_000 });
        assert.ok(existsSync(join(dir, 'ran')), 'bash ran the text');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
