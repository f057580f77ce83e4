/**
 * Hostile command lines against the reader's new structures (brace expansion, `cd` chains, case
 * arms, wrapper chains, here-documents, globs, variables): each completes, and the forbidden
 * command after it is still seen. 256 KB each: a reading that were quadratic in time or memory
 * would not finish.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';

const SIZE = 256 * 1024;
const UNITS = [
  '{a,b}',
  '{a,b} ',
  '{a,{b,c}}',
  '{1..200}',
  'cd a; ',
  'case a in ',
  'case a in "x)" ',
  'sudo ',
  'xargs ',
  'env -S ',
  'cat .e* ',
  'cat $f ',
  'a=(',
  '<<E\n',
  'f() ',
  'function f ',
  '2>&1 ',
  "$'\\x41",
  'find -exec ',
];

describe('hostile command lines complete and still see the command after them', () => {
  for (const unit of UNITS) {
    test(JSON.stringify(unit), () => {
      const command = `${unit.repeat(Math.ceil(SIZE / unit.length))}\nrm -rf /`;
      const result = evaluateAction(
        { allow: ['Bash(git *)'], forbid: ['Bash(rm -rf *)', 'Read(.env)'], escalate: [] },
        { tool: 'Bash', input: { command } },
      );
      assert.ok(['forbidden', 'escalate'].includes(result.verdict), JSON.stringify(result));
    });
  }
});
