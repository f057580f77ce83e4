/**
 * The live boundary under a real certificate forbidding writes under `secret/`: each shell builtin
 * that runs text as code (test/evidence/policy/code-strings.ts) and each hidden patch header is
 * not allowed — denied when the certificate lists the file, asked (which no headless agent grants)
 * when the command is opaque — and the harmless spellings of the same builtins are allowed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BYPASSES, HARMLESS } from '../evidence/policy/code-strings.js';
import { type BoundaryFixture, certificateFor, openFixture, toolBefore } from './fixture.js';

describe('the boundary refuses builtins that run text and patches that hide a file', () => {
  let f: BoundaryFixture;
  before(async () => {
    f = await openFixture(certificateFor({ allow: ['Bash', 'Edit(*)'], forbid: ['Write(secret/**)'] }), null);
  });
  after(async () => {
    await f.close();
  });
  const decide = async (name: string, input: Record<string, unknown>) =>
    (await f.boundary.decide(toolBefore(name, input, f.root), { source: 'hook' })).decision;

  it('no bypass is allowed', async () => {
    for (const { command } of BYPASSES) assert.notEqual(await decide('Bash', { command }), 'allow', command);
  });

  it('the harmless spellings are allowed', async () => {
    for (const command of HARMLESS) assert.equal(await decide('Bash', { command }), 'allow', command);
  });

  it('a patch header hidden by U+2028, U+0085 or a missing space is denied, as a tool or through the shell', async () => {
    for (const header of [
      '*** Add File: secret/x\u2028',
      '\u0085*** Add File: secret/x',
      '*** Add File:secret/x',
    ]) {
      const patch = `*** Begin Patch\n${header}\n+x\n*** End Patch`;
      assert.equal(await decide('apply_patch', { command: patch }), 'deny', JSON.stringify(header));
      assert.equal(await decide('apply_patch', { patchText: patch }), 'deny', JSON.stringify(header));
      const shell = `bash -lc "apply_patch <<'EOF'\n${patch}\nEOF"`;
      assert.equal(await decide('Bash', { command: shell }), 'deny', JSON.stringify(header));
    }
  });
});
