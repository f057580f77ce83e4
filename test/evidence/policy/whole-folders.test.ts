/**
 * A command that writes a whole folder writes what a forbid pattern under it names: `rm -r` and
 * `chmod -R` of a folder holding `protected/`, `tar -x`, `unzip` and `rsync` of contents into it.
 * Oracle: the real programs run each line in a scratch project and change `protected/`; the judge
 * must then not allow it (forbidden where the command reaches all of the folder, escalated where
 * only what an archive or a copied folder holds). The harmless lines leave `protected/` as it was,
 * as the real programs show, and stay allowed.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';
import { have, PROTECTED, verdictTable } from './protected.js';

const POLICY = PROTECTED;
const tools = ['bash', 'tar', 'zip', 'unzip', 'rsync'].every(have);

/** A scratch project: protected/keep, x/f, sub/, a stage holding protected/evil, and archives of it. */
function project(): { root: string; w: string; state: () => string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tally-whole-folders-')));
  const w = join(root, 'w');
  for (const d of ['protected', 'x', 'sub', 'stage/protected']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'protected', 'keep'), 'kept');
  writeFileSync(join(w, 'x', 'f'), 'x');
  writeFileSync(join(w, 'stage', 'protected', 'evil'), 'evil');
  execFileSync('tar', ['-cf', join(w, 'a.tar'), '-C', join(w, 'stage'), 'protected']);
  execFileSync('zip', ['-qr', join(w, 'a.zip'), 'protected'], { cwd: join(w, 'stage') });
  const state = () => {
    const dir = join(w, 'protected');
    if (!existsSync(dir)) return 'gone';
    const keep = join(dir, 'keep');
    return [
      (statSync(dir).mode & 0o777).toString(8),
      existsSync(keep) ? readFileSync(keep, 'utf8') : '-',
      existsSync(join(dir, 'evil')) ? 'evil' : '',
    ].join(' ');
  };
  return { root, w, state };
}

function run(line: string): { changed: boolean; verdict: ReturnType<typeof evaluateAction> } {
  const { root, w, state } = project();
  try {
    const command = line.replaceAll('$W', w);
    const before = state();
    spawnSync('bash', ['-c', command], { cwd: w, stdio: 'ignore', timeout: 20_000 });
    const changed = state() !== before;
    return { changed, verdict: evaluateAction(POLICY, { tool: 'Bash', input: { command }, cwd: w }) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('whole folders written hold what a forbid pattern names', {
  skip: !tools && 'bash, tar, zip, unzip or rsync missing',
}, () => {
  const reachesAll = ['rm -rf $W', 'rm -r -f $W/sub/../../w', 'chmod -R 700 .', 'chmod -R a-w $W'];
  const reachesSome = [
    'tar -xf a.tar',
    'tar xf a.tar',
    'tar -x -f a.tar -C .',
    'unzip -oq a.zip',
    'unzip -oq a.zip -d $W',
    'rsync -a stage/ ./',
    'cp -r stage/. .',
  ];
  verdictTable(run, {
    changes: reachesAll,
    also: (verdict) => {
      assert.equal(verdict.pattern, 'Write(protected/**)');
      assert.match(verdict.reason ?? '', /writes all of/);
    },
  });
  verdictTable(run, {
    changes: reachesSome,
    verdict: 'escalate',
    also: (verdict) => assert.match(verdict.reason ?? '', /may write anything under/),
  });
  test('under opaque_shell deny, a line that may write there is forbidden', () => {
    const verdict = evaluateAction(
      { ...POLICY, opaqueShell: 'deny' },
      { tool: 'Bash', input: { command: 'tar -xf a.tar' }, cwd: '/w' },
    );
    assert.equal(verdict.verdict, 'forbidden');
  });
  const harmless = [
    'rm -rf sub',
    'rm -f x/f',
    'chmod -R 700 sub',
    'chmod 700 .',
    'tar -xf a.tar -C sub',
    'unzip -oq a.zip -d sub',
    'cp -r x y',
    'cp -r x sub',
    'mv x sub',
    'rsync -a x sub/',
    'cp x/f .',
  ];
  verdictTable(run, { harmless });
  test('an escalate pattern under a folder written whole escalates', () => {
    const verdict = evaluateAction(
      { allow: ['Bash'], forbid: [], escalate: ['Write(protected/**)'], controlPlane: 'allow' },
      { tool: 'Bash', input: { command: 'rm -rf /w' }, cwd: '/w' },
    );
    assert.equal(verdict.verdict, 'escalate');
  });
});

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: tmpdir(),
};

/**
 * A repository: protected/keep committed on main ("kept"), changed on branch other ("other"), a
 * patch p.diff that changes it, sub/ and x/; `dirty`: protected/keep changed and protected/evil
 * untracked before the line runs.
 */
function repository(dirty: boolean): { root: string; w: string; state: () => string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tally-whole-folders-git-')));
  const w = join(root, 'w');
  for (const d of ['protected', 'sub', 'x']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'protected', 'keep'), 'kept\n');
  writeFileSync(join(w, 'sub', 'f'), 'f\n');
  writeFileSync(join(w, 'x', 'f'), 'x\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: w, env: GIT_ENV, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-qm', 'start');
  git('checkout', '-qb', 'other');
  writeFileSync(join(w, 'protected', 'keep'), 'other\n');
  git('commit', '-qam', 'other');
  git('checkout', '-q', 'main');
  writeFileSync(join(w, 'p.diff'), git('diff', 'main', 'other'));
  if (dirty) {
    writeFileSync(join(w, 'protected', 'keep'), 'local\n');
    writeFileSync(join(w, 'protected', 'evil'), 'evil\n');
  }
  const state = () =>
    ['keep', 'evil']
      .map((f) => (existsSync(join(w, 'protected', f)) ? readFileSync(join(w, 'protected', f), 'utf8') : '-'))
      .join('|');
  return { root, w, state };
}

function runInRepository(
  line: string,
  dirty: boolean,
): { changed: boolean; verdict: ReturnType<typeof evaluateAction> } {
  const { root, w, state } = repository(dirty);
  try {
    const before = state();
    spawnSync('bash', ['-c', line], { cwd: w, env: GIT_ENV, stdio: 'ignore', timeout: 20_000 });
    const changed = state() !== before;
    return { changed, verdict: evaluateAction(POLICY, { tool: 'Bash', input: { command: line }, cwd: w }) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const hasGitAndPatch = have('git') && have('patch') && have('bash');

describe('git, find -delete and patch rewrite what the line does not name', {
  skip: !hasGitAndPatch && 'git, patch or bash missing',
}, () => {
  const cases: { line: string; dirty: boolean; verdict: 'forbidden' | 'escalate' }[] = [
    { line: 'git checkout other -- protected', dirty: false, verdict: 'forbidden' },
    { line: 'git checkout other protected/keep', dirty: false, verdict: 'forbidden' },
    { line: 'git restore --source=other protected/keep', dirty: false, verdict: 'forbidden' },
    { line: 'git checkout .', dirty: true, verdict: 'forbidden' },
    { line: 'git checkout other', dirty: false, verdict: 'escalate' },
    { line: 'git switch other', dirty: false, verdict: 'escalate' },
    { line: 'cd sub && git checkout -q other', dirty: false, verdict: 'escalate' },
    { line: 'git -C sub checkout -q other', dirty: false, verdict: 'escalate' },
    { line: 'git -C protected checkout -q .', dirty: true, verdict: 'forbidden' },
    { line: 'git merge -q other', dirty: false, verdict: 'escalate' },
    { line: 'git reset -q --hard other', dirty: false, verdict: 'escalate' },
    { line: 'git stash -q', dirty: true, verdict: 'escalate' },
    { line: 'git clean -fdq', dirty: true, verdict: 'escalate' },
    { line: 'git apply p.diff', dirty: false, verdict: 'escalate' },
    { line: 'patch -s -p1 < p.diff', dirty: false, verdict: 'escalate' },
    { line: 'find . -name keep -delete', dirty: false, verdict: 'escalate' },
  ];
  for (const { line, dirty, verdict } of cases)
    test(`${line}: ${verdict}`, () => {
      const ran = runInRepository(line, dirty);
      assert.ok(ran.changed, 'the real command changed protected/');
      assert.equal(ran.verdict.verdict, verdict, JSON.stringify(ran.verdict));
      assert.equal(ran.verdict.pattern, 'Write(protected/**)');
    });
  const harmless: { line: string; dirty: boolean }[] = [
    { line: 'git status --short', dirty: true },
    { line: 'git reset -q', dirty: true },
    { line: 'git checkout -qb new', dirty: false },
    { line: 'git stash list', dirty: true },
    { line: 'git apply --check p.diff', dirty: false },
    { line: 'git restore --staged protected/keep', dirty: true },
    { line: 'git clean -n', dirty: true },
    { line: 'find sub -name f -delete', dirty: false },
    { line: 'git log --oneline', dirty: false },
    { line: 'cd sub && git clean -fdq', dirty: true },
  ];
  for (const { line, dirty } of harmless)
    test(`${line}: allowed`, () => {
      const ran = runInRepository(line, dirty);
      assert.equal(ran.changed, false, 'the real command left protected/ as it was');
      assert.equal(ran.verdict.verdict, 'allowed', JSON.stringify(ran.verdict));
    });
  test('by default (no forbid pattern) a branch switch does not wait on the control plane; naming its files does', () => {
    const judge = (command: string) =>
      evaluateAction(
        { allow: ['Bash'], forbid: [], escalate: [] },
        { tool: 'Bash', input: { command }, cwd: '/w' },
      ).verdict;
    assert.equal(judge('git checkout main'), 'allowed');
    assert.equal(judge('git pull'), 'allowed');
    assert.equal(judge('git checkout other -- .claude/settings.json'), 'escalate');
  });
});
