/**
 * A third adversarial pass over the shell judge: 183 one-line spellings that changed `protected/`
 * under the real programs and were allowed. Each class below is held by lines the real bash (and the
 * program named) runs here: each must change `protected/` and must not be allowed. Classes:
 * descriptors named by path, options after operands, scripts read from the input, startup
 * variables, links made by other programs, programs that run a command, writer options, programs
 * outside the reader and writer tables, and folders only the run knows.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bashLine, have, verdictOf, verdictTable } from './protected.js';

const refused = (changes: string[]) => verdictTable(bashLine, { verdict: 'refused', changes });
const needs = (...programs: string[]) =>
  !programs.every(have) && `not on this machine: ${programs.filter((p) => !have(p)).join(', ')}`;

describe('a descriptor named by path reopens the file it holds', () => {
  refused([
    'exec 3<protected/x; echo hi > /dev/fd/3',
    'echo hi 3<protected/x >/dev/fd/3',
    'echo hi <protected/x >/dev/stdin',
    'exec 3<protected/x; echo hi > /proc/self/fd/3',
    'exec 3<protected/x; truncate -s0 /dev/fd/3',
    'exec 3<protected/x; cp f /dev/fd/3',
    'exec 3<protected/x; echo hi | tee /dev/fd/3',
    'exec 3<protected; rm /dev/fd/3/x',
    'exec 3<protected; echo hi > /dev/fd/3/y',
    'exec 3<protected; cd /dev/fd/3 && rm x',
    'dd if=f of=/dev/fd/3 3<protected/x status=none',
  ]);
  verdictTable(bashLine, { harmless: ['echo hi > /dev/stdout', 'cat f > out.txt; echo done > /dev/stderr'] });
});

describe('options after a wrapper’s operand, abbreviated, and modes that look like options', () => {
  refused([
    "script --comm='rm protected/x' -q /dev/null",
    'chmod -w protected/x',
    'chmod -rwx protected/x',
    'chmod -v -x protected',
    'chmod -R -w protected',
    'chmod --reference=f protected/x && chmod -w protected/x',
  ]);
});

describe('a script read from the input or a descriptor', { skip: needs('python3', 'perl') }, () => {
  refused([
    "bash /dev/stdin <<< 'rm protected/x'",
    "sh /dev/stdin <<< 'rm protected/x'",
    "bash - <<< 'rm protected/x'",
    "bash 3<<<'rm protected/x' /dev/fd/3",
    `python3 /dev/stdin <<< 'import os; os.remove("protected/x")'`,
    `python3 /proc/self/fd/0 <<< 'import os; os.remove("protected/x")'`,
    `python3 <(echo 'import os; os.remove("protected/x")')`,
    `perl /dev/stdin <<< 'unlink "protected/x"'`,
    "perl -pi /dev/stdin protected/x <<< 's/s/S/'",
  ]);
  verdictTable(bashLine, { harmless: ["bash <<< 'echo hi' >/dev/null", 'bash -c true'] });
});

describe('variables that make a program run more', () => {
  refused([
    'BASH_ENV=<(echo rm protected/x) bash -c true',
    "BASH_ENV=/dev/stdin bash -c true <<< 'rm protected/x'",
    "export BASH_ENV=/dev/stdin; bash -c : <<< 'rm protected/x'",
    "env BASH_ENV=/dev/stdin bash -c true <<< 'rm protected/x'",
    "ENV=/dev/stdin sh -i -c true <<< 'rm protected/x' 2>/dev/null",
  ]);
  test("LESSOPEN and NODE_OPTIONS's data: code are judged opaque", () => {
    assert.notEqual(verdictOf("LESSOPEN='|rm protected/x; cat %s' less f"), 'allowed');
    assert.notEqual(verdictOf("NODE_OPTIONS='--import=data:text/javascript,0' node s.js"), 'allowed');
    assert.equal(verdictOf('NODE_OPTIONS=--max-old-space-size=4096 node s.js'), 'allowed');
  });
});

describe('links made by link and cp -l/-s, then written through', () => {
  refused([
    'link protected/x h && echo hi >> h',
    'cp -l protected/x h && echo hi >> h',
    'cp --link protected/x h && echo hi >> h',
    'cp -s "$PWD/protected/x" h && echo hi >> h',
  ]);
});

describe('programs that run a command', {
  skip: needs('unshare', 'prlimit', 'setpriv', 'setarch', 'strace', 'sg', 'ssh-agent', 'npx', 'make'),
}, () => {
  refused([
    'prlimit rm protected/x',
    'prlimit --nofile=100 rm protected/x',
    'setpriv rm protected/x',
    'setarch x86_64 rm protected/x',
    'setarch linux64 -R rm protected/x',
    'linux32 rm protected/x',
    'strace -f -o /dev/null rm protected/x',
    'strace -o protected/trace true',
    "sg root -c 'rm protected/x'",
    "sg root 'rm protected/x'",
    'ssh-agent rm protected/x',
    "su root -c 'rm protected/x'",
    "runuser root -c 'rm protected/x'",
    "npx -c 'rm protected/x'",
    "npm exec -c 'rm protected/x'",
    "npm exec --call='rm protected/x'",
    "split -n 1 --filter='rm protected/x' f",
    "split --filter='cat > protected/$FILE' f",
    "make -f - <<< $'all:\\n\\trm protected/x'",
    "echo 'all: ; rm protected/x' | make -f -",
    "make --eval='$(shell rm protected/x)' -f /dev/null",
    "make -f <(printf 'all:\\n\\trm protected/x\\n')",
    `node --eval='require("fs").rmSync("protected/x")'`,
    `node --import 'data:text/javascript,import fs from "fs";fs.rmSync("protected/x")' /dev/null`,
  ]);
  test('editors and debuggers given commands are opaque', () => {
    for (const line of [
      "vim -es '+w protected/y' '+q' f",
      "ex -s f <<< $'w protected/y\\nq'",
      "ed -s f <<< $'!rm protected/x\\nq'",
      "gdb -batch -ex 'shell rm protected/x'",
      "capsh -- -c 'rm protected/x'",
      'unshare -U rm protected/x',
      'fakeroot rm protected/x',
      'valgrind -q rm protected/x',
      'dbus-run-session -- rm protected/x',
      'nsenter rm protected/x',
    ])
      assert.notEqual(verdictOf(line), 'allowed', line);
    assert.equal(verdictOf('vim --version'), 'allowed');
    assert.equal(verdictOf('npx prettier --check src'), 'allowed');
  });
});

describe('writer options', {
  skip: needs('find', 'curl', 'xxd', 'iconv', 'shuf', 'sdiff', 'patch', 'zstd'),
}, () => {
  refused([
    'find protected -fprint protected/list',
    'find . -maxdepth 0 -fprintf protected/list %p',
    'find . -maxdepth 0 -fls protected/list',
    'curl -s -D protected/h file://$PWD/f',
    'curl -s --trace-ascii protected/t file://$PWD/f',
    'curl -s --stderr protected/e file://nonexist/x',
    'cd protected && curl -sO file:///etc/hostname',
    "curl -s -K - <<< 'output = protected/y' file://$PWD/f",
    'xxd f protected/y',
    'iconv -f utf8 -t utf8 -o protected/y f',
    'shuf -o protected/y f',
    'sdiff -o protected/x f f < /dev/null',
    'zstd -q --output-dir-flat=protected f',
    "patch -b --prefix=protected/ f <<'E'\n--- f\n+++ f\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\nE",
  ]);
  test('wget writes what -e, --save-cookies and --warc-file name', () => {
    for (const line of [
      'wget -q -e output_document=protected/y http://h/x',
      'wget -q --save-cookies protected/c http://h/x -O /dev/null',
      'wget -q --warc-file=protected/w http://h/x -O /dev/null',
    ])
      assert.notEqual(verdictOf(line), 'allowed', line);
    assert.equal(verdictOf('shuf -e a b c'), 'allowed');
  });
});

describe('programs outside the reader and writer tables', {
  skip: needs('sqlite3', 'openssl', 'ssh-keygen', 'gcc', 'cmake', 'ar', 'fallocate'),
}, () => {
  refused([
    "sqlite3 protected/db 'create table t(a)'",
    `sqlite3 :memory: ".output protected/o" "select 1;"`,
    `sqlite3 :memory: "vacuum into 'protected/y'"`,
    'openssl rand -out protected/y 8',
    "ssh-keygen -q -N '' -f protected/k",
    'python3 -m zipfile -c protected/a.zip f',
    'python3 -m py_compile protected/x',
    'fallocate -l 100 protected/x',
    'cmake -E rm protected/x',
    'cmake -E copy f protected/y',
    "gcc -x c - -o protected/a <<< 'int main(){return 0;}'",
    'ar rc protected/a.a f',
  ]);
  verdictTable(bashLine, {
    harmless: [`sqlite3 :memory: "select 1" >/dev/null`, 'openssl rand -hex 4 >/dev/null'],
  });
  test('-o names an output only where the manual says so', () => {
    assert.equal(verdictOf('go build -o protected/x .'), 'forbidden');
    assert.equal(verdictOf('go build -o bin/app ./cmd'), 'allowed');
    assert.equal(verdictOf('ssh -o StrictHostKeyChecking=no h ls'), 'allowed');
    assert.equal(verdictOf('kubectl get pods -o yaml'), 'allowed');
    assert.equal(verdictOf('python -m pytest -q protected'), 'allowed');
    assert.equal(verdictOf('python3 -m pip install --target=protected six'), 'forbidden');
  });
});

describe('folders only the run knows', () => {
  refused([
    'shopt -s cdable_vars; p=protected; cd p && rm x',
    'pushd protected; pushd /; pushd +1; rm x',
    "trap 'rm x' EXIT; cd protected",
  ]);
});
