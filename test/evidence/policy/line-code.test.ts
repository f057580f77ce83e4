/**
 * A line that puts code in a file and runs it (`echo … > s.sh; bash s.sh`, a git hook or alias the
 * line writes, then git; a Makefile, then make) is opaque: what runs is the line's own text, which
 * the judge has not read as commands (src/evidence/policy/line-code.ts). Oracle: the real bash, git,
 * make, sed, awk, node, python3 and npm, run in a git repository holding `protected/`: each such line
 * changes `protected/`, so the judge must not allow it. Code the project already holds, or that a
 * program makes from it (a compiler's output), is judged as a script in a file is: allowed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';
import { gitLine, have, PROTECTED, verdictOf, verdictTable } from './protected.js';

describe('a line that writes code and runs it', {
  skip:
    !['bash', 'git', 'make', 'python3', 'sed', 'awk', 'npm', 'curl'].every(have) && 'a program is missing',
}, () => {
  verdictTable(gitLine, {
    verdict: 'escalate',
    changes: [
      "echo 'rm -rf protected' > s.sh; bash s.sh",
      "echo 'rm -rf protected' > s.sh && . ./s.sh",
      "echo 'rm -rf protected' > s.sh && source s.sh",
      "printf 'rm -rf protected\\n' > s.sh; chmod +x s.sh; ./s.sh",
      "mkdir d && cd d && echo 'rm -rf protected' > s.sh && cd .. && sh d/s.sh",
      "echo 'rm -rf protected' | tee s.sh >/dev/null; sh s.sh",
      "echo 'rm -rf protected' > a; cp a s.sh; sh s.sh",
      "echo 'rm -rf protected' > a; curl -s -o s.sh file://$PWD/a; sh s.sh",
      "echo 'true' > s.sh; sed -i 's/true/rm -rf protected/' s.sh; bash s.sh",
      "cat > s.py <<'EOF'\nimport shutil\nshutil.rmtree('protected')\nEOF\npython3 -u s.py",
      "echo \"require('fs').rmSync('protected', { recursive: true })\" > h.js; node -r ./h.js f",
      "echo '1e rm -rf protected' > s.sed; sed -n -f s.sed f",
      `echo 'BEGIN { system("rm -rf protected") }' > p.awk; awk -f p.awk f`,
      "printf 'all:\\n\\trm -rf protected\\n' > Makefile; make -s",
      "mkdir d; printf 'all:\\n\\trm -rf ../protected\\n' > d/Makefile; make -s -C d",
      "printf 'all:\\n\\trm -rf protected\\n' > rules.mk; make -s -f rules.mk",
      "printf '#!/bin/sh\\nrm -rf protected\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; git commit -qam x",
      "echo '[alias] x = !rm -rf protected' >> .git/config; git x",
      'printf \'{"scripts":{"test":"rm -rf protected"}}\' > package.json; npm test --silent',
      "for i in 1 2; do bash s.sh 2>/dev/null; echo 'rm -rf protected' > s.sh; done",
      "sort -o x.sh <<< 'rm -rf protected'; bash x.sh",
      "printf 'rm -rf protected\\n' | cp /dev/stdin x.sh; bash x.sh",
      `echo 'import shutil; shutil.rmtree("protected")' > evil.py && python3 -m evil`,
      "echo \"require('fs').rmSync('protected', { recursive: true })\" > x.js && node x",
      "echo '!rm -rf protected' > c.txt; ed -s f < c.txt",
      "echo 'rm -rf protected' > e.sh; BASH_ENV=e.sh bash -c :",
    ],
    also: (verdict) => assert.match(verdict.reason ?? '', /runs as code|finds code it runs/),
    harmless: [
      "echo data > in.txt; bash -c 'wc -l in.txt' >/dev/null",
      "echo data > in.txt; sh -c 'cat f' >/dev/null",
      'echo x > notes.txt && git add notes.txt && git commit -qm n',
      'git add -A && git commit -qm x',
      'git checkout -q -b other && git commit -q --allow-empty -m y',
      "printf 'print(1)\\n' > in.py; echo 1 > data.txt; cat data.txt >/dev/null",
    ],
  });
});

describe('code a program makes from the project', { skip: !have('cc') && 'no C compiler' }, () => {
  test('a compiler’s output run in the same line is the project’s code, allowed', () => {
    const { changed, verdict } = gitLine(
      "printf 'int main(void) { return 0; }\\n' > x.c && cc -o a x.c && ./a",
    );
    assert.equal(changed, false);
    assert.equal(verdict.verdict, 'allowed', JSON.stringify(verdict));
  });
});

test('what is not code the line wrote: temporary files, pipes, globs that cannot name it, project output', () => {
  const reason = (command: string) =>
    evaluateAction(PROTECTED, { tool: 'Bash', input: { command }, cwd: '/w' }).reason ?? '';
  for (const line of [
    'sed -i "s/a/b/g" src/*.ts && git diff',
    'sed -i s/a/b/ src/*.ts && npm test',
    'npm test 2>&1 | tee "$LOG"',
    'out=$(mktemp); npm run build > "$out"; git status',
    'exec > >(tee -a run.log) 2>&1; npm test',
    'echo "*.log" >> .git/info/exclude && git status',
    'mkdir -p out && node build.js > out/bundle.js && node out/bundle.js',
    "trap 'rm -f build.log' EXIT; make > build.log",
  ])
    assert.doesNotMatch(reason(line), /runs as code|finds code it runs/, line);
  for (const line of [
    "echo 'rm -rf protected' >> .husky/pre-commit && git commit -m x",
    "echo 'repos: []' > .pre-commit-config.yaml && git commit -m x",
    'echo x > .g*/config; git status',
  ])
    assert.match(reason(line), /finds code it runs/, line);
});

test('the judge sees where the line puts the code, through cd and in a loop', () => {
  // Another file than the one run: allowed; the same file reached through cd: not.
  assert.equal(verdictOf('echo x > t.sh; bash s.sh'), 'allowed');
  assert.equal(verdictOf('cd sub && echo x > s.sh; cd /w && bash sub/s.sh'), 'escalate');
  assert.equal(verdictOf('echo x > sub/s.sh; cd sub && bash ./s.sh'), 'escalate');
  // A name known only at run time is not taken for the script (the same in two calls is a script
  // in a file); under a Write pattern it is a possible match of its own.
  assert.doesNotMatch(
    evaluateAction(PROTECTED, { tool: 'Bash', input: { command: 'echo x > "$F"; bash s.sh' } }).reason ?? '',
    /runs as code/,
  );
  // The running command's own redirection is its output, not its code.
  assert.equal(verdictOf('bash s.sh > s.log'), 'allowed');
  // What npm install writes is the packages' own code, not the line's.
  assert.equal(verdictOf('npm ci && npm test'), 'allowed');
  assert.equal(verdictOf('git log -1 && make'), 'allowed');
});
