/**
 * `apply_patch` typed as a shell command, as Codex's model may run it (`apply_patch <<'EOF'`, inside
 * `bash -lc "…"`, or with the patch as its argument; Codex intercepts each, codex-rs/apply-patch
 * `maybe_parse_apply_patch`): the files of the patch are the command's writes, and a patch the line
 * does not write out is opaque.
 */
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { describe, test } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';
import { shellFileEffects } from '../../../src/evidence/policy/shell-effects.js';

const POLICY = { allow: ['Edit(*)', 'Write(*)', 'Bash'], forbid: ['Write(secret/**)'], escalate: [] };

describe('apply_patch run through the shell', () => {
  const patch =
    '*** Begin Patch\n*** Add File: secret/x\n+x\n*** Update File: src/a\n@@\n-a\n+b\n*** End Patch';
  const writes = (command: string) => shellFileEffects(command, '/w').writes.map((w) => `${w.cwd}/${w.path}`);

  test('a here-document, a here-string and an argument are read as the patch', () => {
    assert.deepEqual(writes(`apply_patch <<'EOF'\n${patch}\nEOF`), ['/w/secret/x', '/w/src/a']);
    assert.deepEqual(writes(`applypatch <<"EOF"\n${patch}\nEOF`), ['/w/secret/x', '/w/src/a']);
    assert.deepEqual(writes(`apply_patch <<< '${patch}'`), ['/w/secret/x', '/w/src/a']);
    assert.deepEqual(writes(`apply_patch '${patch}'`), ['/w/secret/x', '/w/src/a']);
    // An unquoted delimiter whose body has no expansion is the same text.
    assert.deepEqual(writes(`apply_patch <<EOF\n${patch}\nEOF`), ['/w/secret/x', '/w/src/a']);
  });

  test('inside bash -lc, after a cd, as Codex runs it', () => {
    const command = `bash -lc "cd sub && apply_patch <<'EOF'\n${patch}\nEOF\n"`;
    assert.deepEqual(writes(command), ['/w/sub/secret/x', '/w/sub/src/a']);
    const verdict = evaluateAction(POLICY, {
      tool: 'Bash',
      input: { command: `apply_patch <<'EOF'\n${patch}\nEOF` },
    });
    assert.equal(verdict.verdict, 'forbidden');
  });

  test('a patch the line does not write out is opaque', () => {
    for (const command of [
      'apply_patch < change.patch',
      'cat change.patch | apply_patch',
      'apply_patch "$PATCH"',
      'apply_patch',
      `apply_patch <<EOF\n*** Begin Patch\n*** Add File: $(echo secret)/x\n+x\n*** End Patch\nEOF`,
    ]) {
      assert.equal(shellFileEffects(command, '/w').opaque, true, command);
      const verdict = evaluateAction(
        { ...POLICY, opaqueShell: 'deny' },
        { tool: 'Bash', input: { command } },
      );
      assert.equal(verdict.verdict, 'forbidden', command);
    }
  });
  test('after a cd, the patch is read in the folder Codex takes the word for, as written, too', () => {
    // codex-rs/apply-patch invocation.rs takes `cd WORD &&`'s folder as tree-sitter has it written:
    // the pinned Codex wrote `cd safe\x && apply_patch` through a link named `safe\x`
    // (test/agents/tally-codex.test.ts).
    const body = `<<'EOF'\n${patch}\nEOF`;
    const cases: [string, string[]][] = [
      ['cd safe\\x', ['/w/safex/secret/x', '/w/safex/src/a', '/w/safe\\x/secret/x', '/w/safe\\x/src/a']],
      [
        'cd "safe\\$x"',
        ['/w/safe$x/secret/x', '/w/safe$x/src/a', '/w/safe\\$x/secret/x', '/w/safe\\$x/src/a'],
      ],
      ['cd a\\ b', ['/w/a b/secret/x', '/w/a b/src/a', '/w/a\\ b/secret/x', '/w/a\\ b/src/a']],
      [
        'cd sub && cd x\\y',
        ['/w/sub/xy/secret/x', '/w/sub/xy/src/a', '/w/sub/x\\y/secret/x', '/w/sub/x\\y/src/a'],
      ],
      // Words bash and Codex read alike give one folder.
      ["cd 'sub'", ['/w/sub/secret/x', '/w/sub/src/a']],
      ['cd "sub"', ['/w/sub/secret/x', '/w/sub/src/a']],
    ];
    for (const [cd, expected] of cases) {
      const written = shellFileEffects(`${cd} && apply_patch ${body}`, '/w').writes.map((w) =>
        posix.resolve(w.cwd as string, w.path),
      );
      assert.deepEqual(written.sort(), expected.sort(), cd);
    }
    // Where the folder as written cannot be said from bash's, the patch is opaque.
    for (const cd of ['cd \\/tmp', 'cd .. && cd x\\y'])
      assert.equal(shellFileEffects(`${cd} && apply_patch ${body}`, '/w').opaque, true, cd);
    // Other commands run in bash's folder only.
    assert.deepEqual(
      shellFileEffects('cd safe\\x && echo x > f', '/w').writes.map((w) =>
        posix.resolve(w.cwd as string, w.path),
      ),
      ['/w/safex/f'],
    );
  });
});
