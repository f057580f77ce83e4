/**
 * Globs bash expands when the command runs (`protec?ed/`, `p*`, `rm -rf *`), in operands, option
 * values and redirections. Oracle: bash running each line in a folder holding `protected/x`: a line
 * whose glob reaches into `protected/` changes it and must not be allowed; a glob that cannot name
 * it stays allowed.
 */
import { describe } from 'node:test';
import { bashLine, have, verdictTable } from './protected.js';

describe('globs that may name a forbidden folder', {
  skip: !['bash', 'tar', 'sort'].every(have) && 'bash, tar or sort missing',
}, () => {
  verdictTable(bashLine, {
    verdict: 'escalate',
    changes: [
      'cp f protec?ed/',
      'echo changed > protec?ed/x',
      'cat f >> p[r]otected/x',
      'rm -rf *',
      'rm -rf ./*',
      'rm -r p*',
      'sort -o protec?ed/x f',
      'tar -cf a.tar f && tar -xf a.tar -C p*',
      'rm -rf prot[[:alpha:]]cted',
      'cp f prot[[:alpha:]]cted/',
      'shopt -s extglob\nrm -rf @(protected)',
      'shopt -s extglob\nrm -rf !(f)',
      'rm -rf ~+/prot*',
    ],
    harmless: ['touch o1 && cp f o*', 'touch a.log && rm -f *.log', 'ls p* > list', 'cat *'],
  });
});
