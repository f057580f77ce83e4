/**
 * sed and awk scripts that write files or run commands. Oracles: the real GNU sed (the files it
 * creates when it reads a script, and what `sed --sandbox` refuses: every `e`, `r`, `w`), the real
 * gawk and mawk (the files a program creates), and bash running each line in a folder with
 * `protected/`: a line that changes `protected/` must not be allowed. Generated scripts come from a
 * seeded generator; a failure names the script.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { readAwkProgram } from '../../../src/evidence/policy/awk-program.js';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';
import { readSedScript } from '../../../src/evidence/policy/sed-script.js';
import { Prng } from './prng.js';
import { bashLine, have, verdictTable } from './protected.js';

const hasSed = spawnSync('sed', ['--version'], { encoding: 'utf8' }).stdout?.includes('GNU sed') ?? false;
const awks = ['gawk', 'mawk'].filter(
  (a) => spawnSync(a, ['-W', 'version'], { stdio: 'ignore' }).error === undefined,
);

/** Runs a program in an empty folder; the names it created there. */
function created(
  program: string,
  args: string[],
): { files: string[]; status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tally-script-'));
  try {
    const r = spawnSync(program, args, { cwd: dir, encoding: 'utf8', input: '', timeout: 10_000 });
    return { files: readdirSync(dir).sort(), status: r.status, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function sedScript(g: Prng): string {
  const delims = ['/', '|', ',', '#', ';', ' ', 'x', 'w', '[', ']', '}', '{', 'e', ':'];
  const piece = () =>
    g.pick([
      'a',
      'b',
      '[/]',
      '[]/]',
      '[^/]',
      '[[:alpha:]/]',
      '\\/',
      '\\n',
      '\\',
      '[',
      ']',
      ';',
      ' ',
      'w o1',
      '\n',
      '}',
      '#',
      'e',
      '[|]',
      '.*',
      '',
    ]);
  const text = () => Array.from({ length: g.int(3) }, piece).join('');
  const address = () =>
    g.pick(['', '', '1', '$', '/a/', '\\,a,', '/[/]/', '1~2', '0,/a/', '1,+2', '/x/I', '1,$', '2!', '1 !']);
  const command = () => {
    const d = g.pick(delims);
    return (
      address() +
      g.pick([
        'p',
        'd',
        '=',
        `s${d}${text()}${d}${text()}${d}${g.pick(['', 'g', 'w o2', 'pw o3', 'e', '2', ' w o4', 'x', 'gw o5; p'])}`,
        `y${d}ab${d}cd${d}`,
        'w o6',
        'W o7; x',
        'r o8',
        'e true',
        ':a',
        'b a',
        'ta;w o9',
        '{',
        '}',
        '{p}',
        'a text w o10',
        'a\\\nw o11',
        'i\\',
        'q',
        'l 3',
        '#w o12',
        'w o13}',
        'R o14',
        'v 4.2',
        'F',
        'c\\\nx\\\nw o15',
        ':a w o16',
        'b a w o17',
        'a\\ \nw o18',
      ])
    );
  };
  return Array.from({ length: 1 + g.int(4) }, command).join(g.pick([';', '\n', ' ; ', '\n\n']));
}

describe('sed scripts, against GNU sed', { skip: !hasSed && 'GNU sed is not installed' }, () => {
  test('every file sed creates is listed, --sandbox refuses no script read as harmless, and the two mostly agree', () => {
    const g = new Prng(20261206);
    let valid = 0;
    let exact = 0;
    for (let k = 0; k < 400; k++) {
      const script = sedScript(g);
      const read = readSedScript(script);
      const real = created('sed', ['-n', '-e', script, '/dev/null']);
      const missing = real.files.filter((f) => !read.writes.includes(f));
      assert.deepEqual(missing, [], `sed created files the reader missed for ${JSON.stringify(script)}`);
      if (read.error !== undefined) {
        // A script read as broken is opaque to the judge; sed refuses it too.
        assert.notEqual(real.status, 0, `sed ran ${JSON.stringify(script)}, read as ${read.error}`);
        continue;
      }
      if (real.status !== 0) continue;
      valid++;
      const sandbox = created('sed', ['--sandbox', '-n', '-e', script, '/dev/null']);
      const refused = /disabled in sandbox mode/.test(sandbox.stderr);
      const flagged = read.runs || read.writes.length > 0 || read.reads.length > 0;
      if (refused) assert.ok(flagged, `sed --sandbox refuses ${JSON.stringify(script)}, read as harmless`);
      // The text of a, i, c and e continued over a backslash is also read as commands (a reading
      // that may list more than sed writes, never less); elsewhere the two agree exactly.
      if (flagged === refused && [...new Set(read.writes)].sort().join('\n') === real.files.join('\n'))
        exact++;
    }
    assert.ok(valid > 100, `only ${valid} generated scripts were valid`);
    assert.ok(exact >= valid * 0.9, `the reader agreed exactly with sed on ${exact} of ${valid} scripts`);
  });

  test('filenames run to the end of the line; e runs commands; comments and brackets hide nothing', () => {
    const cases: [string, string[], boolean][] = [
      ['w out; p', ['out; p'], false],
      ['s/a/b/w x', ['x'], false],
      ['s/a/b/ gw y', ['y'], false],
      ['1{w z}', ['z}'], false],
      ['s/x[/]/w o2/', [], false],
      ['p # w o10', [], false],
      ['a\\\ntext\nw o14', ['o14'], false],
      ['e touch x\\\nw o', ['o'], true],
      ['s/a/b/e', [], true],
      ['$!{W q\n}', ['q'], false],
    ];
    for (const [script, writes, runs] of cases) {
      const read = readSedScript(script);
      assert.equal(read.error, undefined, script);
      assert.deepEqual(read.writes, writes, script);
      assert.equal(read.runs, runs, script);
      if (!runs)
        assert.deepEqual(created('sed', ['-n', '-e', script, '/dev/null']).files, [...writes].sort(), script);
    }
  });
});

function awkProgram(g: Prng): string {
  const atom = () =>
    g.pick([
      '1',
      'x',
      '"s"',
      '"a>b"',
      '"/"',
      '/a/',
      '/"/',
      '/[/]/',
      '/>/',
      '$1',
      '(1 > 2)',
      'a[1]',
      'length',
      'x++',
      '"q\\"o8"',
      '1e3',
      '.5',
    ]);
  const expr = () =>
    Array.from({ length: 1 + g.int(3) }, atom).join(
      g.pick([' ', ' / ', '/', ' > ', ' >> ', ', ', ' < ', ' >= ', ' ~ ', ' + ', '']),
    );
  const target = () =>
    g.pick(['"o1"', '"o2" ', '("o3")', '"o4" "o5"', 'x', '"o6" x', '"\\157\\061\\060"', '"o11"; y=1', '7']);
  const statement = () =>
    g.pick([
      () => `print ${g.chance(0.5) ? expr() : ''}`,
      () => `print ${expr()} > ${target()}`,
      () => `printf("%s\\n", ${atom()}) >> ${target()}`,
      () => `printf "%s", ${atom()} > ${target()}`,
      () => `if (${expr()}) ${g.pick(['/"/', '/>/', 'print 1 > "o12"', '/a/ ? 1 : 2'])}`,
      () => 'while (0) /"/',
      () => `x = ${expr()}`,
      () => '# print > "o13"',
      () => `getline line < ${target()}`,
      () => `y = "${g.pick(['>', '/', '"', '\\"'])}"`,
      () => 'print 1 /2; print 2 > "o14"; z = 3/ 4',
      () => 'if (1) /"/; print 3 > "o15"; w = "/"',
    ])();
  return `BEGIN { ${Array.from({ length: 1 + g.int(4) }, statement).join(g.pick(['; ', '\n', ';\n', ' ; ']))} }`;
}

describe('awk programs, against gawk and mawk', { skip: awks.length === 0 && 'no awk is installed' }, () => {
  test('every file awk creates is a listed write, or the program names one computed at run time', () => {
    const g = new Prng(6122026);
    let checked = 0;
    for (let k = 0; k < 250; k++) {
      const program = awkProgram(g);
      const read = readAwkProgram(program);
      if (read.error !== undefined || read.runs !== undefined) continue;
      const named = read.writes.filter((w): w is string => w !== null);
      for (const awk of awks) {
        const real = created(awk, [program]);
        if (read.writes.includes(null)) continue;
        assert.deepEqual(
          real.files.filter((f) => !named.includes(f)),
          [],
          `${awk} created files the reader missed for ${JSON.stringify(program)}`,
        );
        if (real.status === 0) checked++;
      }
    }
    assert.ok(checked > 50, `only ${checked} generated programs ran`);
  });

  test('a regular expression after if (…) is not a division: what follows it is code', () => {
    const program = 'BEGIN { if (1) /"/; print 3 > "o15"; w = "/" }';
    assert.deepEqual(readAwkProgram(program).writes, ['o15']);
    // gawk reads it so; mawk refuses a regular expression there (a syntax error, nothing written).
    for (const awk of awks) {
      const real = created(awk, [program]);
      if (awk === 'mawk') assert.deepEqual([real.status, real.files], [2, []]);
      else assert.deepEqual(real.files, ['o15'], awk);
    }
  });

  test('commands, pipes and code from elsewhere are reported; comparisons outside print are not writes', () => {
    assert.match(readAwkProgram('BEGIN { system("true") }').runs ?? '', /system/);
    assert.match(readAwkProgram('{ print | "sh" }').runs ?? '', /pipe/);
    assert.match(readAwkProgram('BEGIN { "date" |& getline x }').runs ?? '', /pipe/);
    assert.match(readAwkProgram('@load "rwarray"\nBEGIN { }').runs ?? '', /@load/);
    assert.match(readAwkProgram('BEGIN { f = "system"; @f("true") }').runs ?? '', /by name/);
    assert.equal(readAwkProgram('@include "inplace"\n{ print }').inPlace, true);
    assert.equal(readAwkProgram('BEGIN { x = 1 || 2 }').runs, undefined);
    assert.deepEqual(readAwkProgram('$1 > 5 { print (1 > 2) }').writes, []);
    assert.deepEqual(readAwkProgram('{ print $1 > $2 }').writes, [null]);
    assert.deepEqual(readAwkProgram('{ print $1 > 3 }').writes, ['3']);
    assert.deepEqual(readAwkProgram('BEGIN { getline l < ".env" }').reads, ['.env']);
  });
});

describe('sed and awk lines that write protected/', {
  skip: !(hasSed && ['bash', 'gawk', 'mawk'].every(have)) && 'bash, GNU sed, gawk or mawk is missing',
}, () => {
  verdictTable(bashLine, {
    changes: [
      "sed -n 'w protected/x' f",
      "sed -n 's/one/1/w protected/y' f",
      "sed -n --expression='1W protected/x' f",
      "sed -n -e p -e 'w protected/z' f",
      'awk \'{ print > "protected/x" }\' f',
      'gawk \'BEGIN { printf("%s\\n", 1) >> "protected/x" }\'',
      'mawk -v x=1 \'{ print x > "protected/new" }\' f',
      'awk -F: \'BEGIN { if (1) /"/; print 3 > "protected/x"; w = "/" }\'',
      'gawk -i inplace \'{ print "changed" }\' protected/x',
      'gawk -W include=inplace \'{ print "changed" }\' protected/x',
      "cd protected && gawk -p '{ print }' ../f",
    ],
    harmless: [
      "sed -n 's/one/1/p' f",
      "sed -e 's/ *$//' f",
      "awk '$1 > 5 { print (1 > 2) }' f",
      'awk \'BEGIN { x = 1 || 2; print x > "/dev/stderr" }\'',
      "sed -n 'w out' f",
      "sed --sandbox 's/one/1/' f",
    ],
  });

  for (const line of [
    "awk '{ print > $1 }' f",
    "sed 's/a/b/e' f",
    "echo 'w protected/x' | sed -f - f",
    'awk -v x=1 \'BEGIN { system("touch protected/y") }\'',
    'gawk -W source=\'BEGIN { system("touch protected/y") }\'',
    'echo \'BEGIN { print 1 > "protected/y" }\' | awk -f - f',
  ])
    test(`${line}: escalated (a name or command known only at run time)`, () => {
      assert.equal(bashLine(line).verdict.verdict, 'escalate');
    });
});

describe('spellings that once slipped past the readers', {
  skip: !(hasSed && ['bash', 'gawk', 'mawk'].every(have)) && 'bash, GNU sed, gawk or mawk is missing',
}, () => {
  verdictTable(bashLine, {
    verdict: 'refused',
    changes: [
      "sed -n ':a w protected/x' f",
      "sed -n '1c\\\\\nw protected/x' f",
      "sed -n 'v 4.2 w protected/x' f",
      "sed -n '$a\\ \nw protected/x' f",
      "POSIXLY_CORRECT=1 sed -n 'w protected/x' --sandbox f",
      "sed -i'protected/*' 's/one/ONE/' f",
      "echo 'w protected/x' | sed -f /dev//stdin f",
      'gawk \'BEGIN { print "p" > "protected\\x2fx" }\'',
      'mawk \'BEGIN { case = 4; x = case / 2; print "p" > "protected\\057x"; y = 1 / 2 }\'',
      'mawk \'BEGIN { x = "a" ~ /[[.]/ ; print "p" > "protected\\057x" ; y = /.]]/ }\'',
      'gawk -v x=1 -W source=\'BEGIN { print "p" > "protected/x" }\'',
      'echo \'BEGIN { print "p" > "protected/x" }\' | mawk -Winteractive,exec /dev/stdin',
      'gawk -i /usr/share/awk/inplace.awk \'{ print "pwn" }\' protected/x',
      'gawk -i inplace \'BEGIN { ARGV[1] = "protected/x" } { print "pwn" }\' f',
      'echo \'BEGIN { print "p" > "protected/x" }\' > stdin && AWKPATH=. gawk -f stdin',
    ],
    harmless: ['X=1; awk -vx="$X" \'{ print x }\' f', 'SEP=:; awk -F"$SEP" \'{ print $1 }\' f'],
  });
});

test('files a script reads by name meet Read patterns', () => {
  const policy = { allow: ['Bash'], forbid: ['Read(.env)'], escalate: [], controlPlane: 'allow' as const };
  const verdict = (command: string) =>
    evaluateAction(policy, { tool: 'Bash', input: { command }, cwd: '/w' }).verdict;
  assert.equal(verdict("sed '1r .env' f"), 'forbidden');
  assert.equal(verdict('awk \'BEGIN { while ((getline l < ".env") > 0) print l }\''), 'forbidden');
  assert.equal(verdict("sed 's/a/b/' f"), 'allowed');
});
