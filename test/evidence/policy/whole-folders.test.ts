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

const POLICY = {
  allow: ['Bash'],
  forbid: ['Write(protected/**)'],
  escalate: [],
  controlPlane: 'allow' as const,
};
const have = (program: string) => spawnSync(program, ['--version'], { stdio: 'ignore' }).error === undefined;
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
  for (const line of reachesAll)
    test(`${line}: forbidden`, () => {
      const { changed, verdict } = run(line);
      assert.ok(changed, 'the real command changed protected/');
      assert.equal(verdict.verdict, 'forbidden', JSON.stringify(verdict));
      assert.equal(verdict.pattern, 'Write(protected/**)');
      assert.match(verdict.reason ?? '', /writes all of/);
    });
  for (const line of reachesSome)
    test(`${line}: escalated`, () => {
      const { changed, verdict } = run(line);
      assert.ok(changed, 'the real command changed protected/');
      assert.equal(verdict.verdict, 'escalate', JSON.stringify(verdict));
      assert.match(verdict.reason ?? '', /may write anything under/);
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
  for (const line of harmless)
    test(`${line}: allowed`, () => {
      const { changed, verdict } = run(line);
      assert.equal(changed, false, 'the real command left protected/ as it was');
      assert.equal(verdict.verdict, 'allowed', JSON.stringify(verdict));
    });
  test('an escalate pattern under a folder written whole escalates', () => {
    const verdict = evaluateAction(
      { allow: ['Bash'], forbid: [], escalate: ['Write(protected/**)'], controlPlane: 'allow' },
      { tool: 'Bash', input: { command: 'rm -rf /w' }, cwd: '/w' },
    );
    assert.equal(verdict.verdict, 'escalate');
  });
});
