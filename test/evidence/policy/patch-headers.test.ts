/**
 * Patch headers that one of the parsers applying them reads as a file, whatever the line breaks
 * and spacing around them. Oracles: Codex's parser (codex-rs/apply-patch/src/parser.rs: `lines()`
 * splits at `\n` and drops a `\r` before it, each line is `trim()`med of Unicode white space, then
 * `*** Add File: ` is stripped) and OpenCode's (packages/opencode/src/patch/index.ts: split at
 * `\n`, `*** Add File:` with or without a space, the path trimmed). Every file either would touch
 * must be a judged write, through the Codex and OpenCode patch tools.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { patchChanges } from '../../../src/capture/codex/patch.js';
import { translateOpenCode } from '../../../src/capture/opencode/translate.js';
import { judgeCall, normalizeCall } from '../../../src/evidence/policy/judge.js';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';

const POLICY = { allow: ['Edit(*)', 'Write(*)', 'Bash'], forbid: ['Write(secret/**)'], escalate: [] };
const envelope = (body: string) => `*** Begin Patch\n${body}\n+x\n*** End Patch\n`;

/** Header lines Codex reads as `secret/x` (its trim), and those OpenCode reads so. */
const CODEX_SPELLINGS = [
  '*** Add File: secret/x\u2028',
  '*** Add File: secret/x\u2029',
  '*** Add File: secret/x\u0085',
  '\u0085*** Add File: secret/x',
  '\u2028*** Add File: secret/x',
  '*** Add File: secret/x\r\r',
  '*** Add File: secret/x\r',
  '\r*** Add File: secret/x',
  '*** Add File: secret/x\u00a0',
  '\u3000*** Delete File: secret/x',
];
const OPENCODE_SPELLINGS = [
  '*** Add File:secret/x',
  '*** Update File:\tsecret/x',
  '*** Delete File:  secret/x',
];

describe('every spelling of a header either parser reads is a judged write', () => {
  for (const header of [...CODEX_SPELLINGS, ...OPENCODE_SPELLINGS]) {
    const patch = envelope(header);
    test(JSON.stringify(header), () => {
      for (const input of [{ command: patch }, { input: patch }, { patchText: patch }]) {
        const verdict = evaluateAction(POLICY, { tool: 'apply_patch', input });
        assert.equal(verdict.verdict, 'forbidden', JSON.stringify(input));
      }
    });
  }

  test('Codex file changes read the path Codex reads', () => {
    for (const header of CODEX_SPELLINGS) {
      const changes = patchChanges(envelope(header));
      assert.equal(changes[0]?.path, 'secret/x', JSON.stringify(header));
    }
    const moved = patchChanges(
      '*** Begin Patch\n*** Update File: a\n*** Move to: secret/b\u2028\n@@\n-a\n+b\n*** End Patch',
    );
    assert.deepEqual(moved, [{ path: 'secret/b\u2028', change: 'moved', previousPath: 'a' }]);
  });

  test('a path Codex reads with its leading space is listed as well as the trimmed one', () => {
    const patch = '*** Begin Patch\n*** Update File: a\n*** Move to:  secret/b\n@@\n-a\n+b\n*** End Patch';
    assert.equal(evaluateAction(POLICY, { tool: 'apply_patch', input: patch }).verdict, 'forbidden');
    assert.equal(patchChanges(patch)[0]?.path, ' secret/b');
  });
});

test("OpenCode's apply_patch event: a header without the space is judged as OpenCode applies it", () => {
  const root = '/home/user/project';
  for (const header of OPENCODE_SPELLINGS) {
    const { event } = translateOpenCode({
      hook_event_name: 'tool.execute.before',
      session_id: 's',
      cwd: root,
      input: { tool: 'apply_patch', sessionID: 's', callID: 'c1' },
      output: { args: { patchText: envelope(header) } },
    });
    const call = normalizeCall(event, { root, cwd: root });
    assert.ok(call !== undefined);
    assert.equal(judgeCall(POLICY, call).verdict, 'forbidden', header);
  }
});
