/**
 * Command lines programs run from an option's value (tar `-I`, `--to-command`,
 * `--checkpoint-action=exec=`; rsync `-e`; zip `-TT`), what `zip -m` moves away, and what `xargs`
 * passes from its input. Oracle: the real programs run by bash in a folder holding `protected/`: each
 * line that changes it must not be allowed; the everyday forms stay allowed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';
import { bashLine, have, PROTECTED, verdictTable } from './protected.js';

describe('command lines given in options', {
  skip: !['bash', 'tar', 'rsync', 'zip'].every(have) && 'bash, tar, rsync or zip missing',
}, () => {
  verdictTable(bashLine, {
    changes: [
      "tar -I 'touch protected/y' -cf a.tar f",
      "tar --use-compress-program='rm protected/x' -cf a.tar f",
      "tar -cf a.tar f && tar --to-command='tee protected/x' -xf a.tar",
      "tar --checkpoint=1 --checkpoint-action=exec='rm protected/x' -cf a.tar f",
      'rsync -e \'sh -c "touch protected/y"\' f host:dst',
      "zip -q a.zip f && zip -T -TT 'touch protected/y' a.zip f",
      'zip -qm a.zip protected/x',
      'zip -qrm a.zip protected',
    ],
    harmless: [
      'tar -czf a.tar.gz f',
      'tar -I gzip -cf a.tgz f',
      'rsync -a f g',
      'zip -q a.zip f protected/x',
      "zip -qr a.zip . -x 'protected/*'",
      'ls | xargs -I{} echo {}',
    ],
  });

  test('sort --compress-program runs its value', () => {
    const verdict = evaluateAction(PROTECTED, {
      tool: 'Bash',
      input: { command: "sort -S 1k --compress-program='rm protected/x' f" },
      cwd: '/w',
    });
    assert.equal(verdict.verdict, 'forbidden');
  });
});

describe('xargs passes files from its input', { skip: !['bash'].every(have) && 'bash missing' }, () => {
  verdictTable(bashLine, {
    verdict: 'escalate',
    changes: [
      'echo protected/x | xargs rm',
      'find protected -type f | xargs rm -f',
      "printf 'protected/x\\n' > list && xargs -a list truncate -s0",
    ],
    harmless: ['echo f | xargs cat', 'ls | xargs -I{} echo {}'],
  });
  // Where the line fixes the folder, the file's name alone comes from the input.
  verdictTable(bashLine, { changes: ['echo x | xargs -I{} rm protected/{}'] });
});
