/**
 * A line that makes a link and then writes where it put it is judged opaque: the boundary resolves
 * only the links that exist when the call is judged, and this one is made by the call itself.
 * Oracle: real bash in a temp dir shows each such line writing into protected/ (and the harmless
 * forms not), against docs/policy.md "Through links": links made by ln, mv and cp, and links a tree
 * someone else made brings in (tar -x, unzip, rsync).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type ActionPolicy, evaluateAction } from '../../../src/evidence/policy/patterns.js';

const POLICY: ActionPolicy = {
  allow: ['Bash'],
  forbid: ['Write(protected/**)'],
  escalate: [],
  opaqueShell: 'deny',
  controlPlane: 'allow',
};
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh tree with protected/f, where `command` runs under bash; what protected/ then holds. */
function ranInBash(command: string): { root: string; wrote: boolean } {
  const root = mkdtempSync(join(tmpdir(), 'tally-line-links-'));
  dirs.push(root);
  mkdirSync(join(root, 'protected'));
  writeFileSync(join(root, 'protected', 'f'), 'kept\n');
  writeFileSync(join(root, 'x'), 'x\n');
  // A tree someone else made, holding a link `f -> ../protected/f`, and archives of it.
  mkdirSync(join(root, 'stage'));
  symlinkSync('../protected/f', join(root, 'stage', 'f'));
  execFileSync('tar', ['-cf', 'links.tar', '-C', 'stage', 'f'], { cwd: root });
  execFileSync('zip', ['-qy', '../links.zip', 'f'], { cwd: join(root, 'stage') });
  execFileSync('bash', ['-c', command], { cwd: root, stdio: 'ignore' });
  const wrote =
    existsSync(join(root, 'protected', 'a')) ||
    execFileSync('cat', [join(root, 'protected', 'f')], { encoding: 'utf8' }) !== 'kept\n';
  return { root, wrote };
}

const verdict = (root: string, command: string) =>
  evaluateAction(POLICY, { tool: 'Bash', input: { command }, cwd: root, base: root, home: '/nonexistent' });

describe('a link the line makes before it writes through it', () => {
  for (const command of [
    'ln -s protected link && echo x > link/a',
    'ln -s protected/f f; echo x > f',
    'ln protected/f hard && echo x >> hard',
    'ln -s protected l1 && mv l1 out && echo x > out/a',
    'ln -s protected l1 && cp -P l1 out && echo x > out/a',
    'ln -s protected l1 && cp -a l1 out && echo x > out/a',
    'cd . && ln -s "$PWD/protected" link && echo x | tee link/a',
    'mkdir sub && tar -xf links.tar -C sub && echo x > sub/f',
    'mkdir sub && tar xf links.tar -C sub; echo x >> sub/f',
    'unzip -oq links.zip -d sub && echo x > sub/f',
    'rsync -a stage/ sub/ && echo x > sub/f',
  ]) {
    it(command, () => {
      const { root, wrote } = ranInBash(command);
      assert.equal(wrote, true, 'bash wrote into protected/');
      const v = evaluateAction(POLICY, {
        tool: 'Bash',
        input: { command },
        cwd: root,
        base: root,
        home: '/none',
      });
      assert.equal(v.verdict, 'forbidden', JSON.stringify(v));
      assert.match(String(v.reason), /may leave a link where the line then writes/);
    });
  }

  for (const command of [
    'ln -s a b && echo x > c',
    'mkdir -p out && cp x out/ && echo done > out/log',
    'echo x > y && ln -s y z',
    'cp -r src out 2>/dev/null; echo x > other',
    'mkdir sub && tar -xf links.tar -C sub && echo x > other',
    'tar -cf out.tar x && echo x > out.log',
  ]) {
    it(`not: ${command}`, () => {
      const { root, wrote } = ranInBash(command);
      assert.equal(wrote, false);
      assert.equal(verdict(root, command).verdict, 'allowed');
    });
  }
});
