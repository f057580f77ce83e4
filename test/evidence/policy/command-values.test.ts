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
      "tar cfI a.tar 'tee protected/x' f",
      'zip -q a.zip f -x zz -m protected/x',
      'tar -cf a.tar protected --remove-files',
      'tar -cf a.tar --listed-incremental=protected/snap f',
      'rsync --remove-source-files protected/x r1',
      'rsync --log-file=protected/log f r2',
      'zip -q a.zip f && zip -q a.zip --out protected/y.zip',
      'tar -c -f a.tar -C protected x --remove-files',
      'rsync --remove-sent-files protected/x d',
      'zip -q -P pw protected/a.zip f',
      'zip -q a.zip f -lf protected/y',
      'mkdir -p s/protected && echo pwn > s/protected/x && rsync -R s/./protected/x .',
      'mkdir -p s/protected && echo pwn > s/protected/x && cd s && cp --parents protected/x ..',
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

describe('writes under names the line does not spell out', {
  skip: !['bash', 'tar', 'rsync'].every(have) && 'bash, tar or rsync missing',
}, () => {
  verdictTable(bashLine, {
    verdict: 'refused',
    changes: [
      "tar -cf a.tar f && tar -xf a.tar --transform='s,^,protected/,'",
      'mkdir sub && rsync f sub/ && echo three >> f && rsync -b --backup-dir=../protected f sub/',
      'echo protected/x > L; tar -cf a.tar --remove-files -T L',
      'TAPE=protected/y tar -c f',
      'script -q protected/y -c true',
    ],
  });
});

describe('variables that give a program its options', {
  skip: !['bash', 'tar', 'zip'].every(have) && 'bash, tar or zip missing',
}, () => {
  verdictTable(bashLine, {
    verdict: 'escalate',
    changes: [
      "TAR_OPTIONS='--use-compress-program=touch\\ protected/y' tar -cf a.tar f",
      'ZIPOPT=-m zip -q a.zip protected/x',
      'echo protected/x | zip -qm -@ a.zip',
    ],
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
