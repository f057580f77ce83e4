/**
 * A shell command's files are judged where they lead: a redirection, `cp`, `tee` or `sed -i` into a
 * link whose target is a forbidden folder is denied, the link recorded (`resolved`), and the
 * verifier re-judges the call from the record alone to the same verdict. Oracle: the kernel — a
 * write through `link/` where `link -> protected/` lands in protected/ (checked below by running
 * the command with bash).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { crossVerify } from '../../src/evidence/package/cross-verify.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { certificateFor, openFixture, toolBefore } from './fixture.js';

const WRITES = ['echo x > link/a', 'cp f link/b', 'echo x | tee link/c', 'sed -i s/x/y/ link/d'];

/** A project with `protected/`, `src/`, `other/`, `link -> protected/`, `inside -> src/` and `src/out -> ../other`. */
function project(root: string): void {
  mkdirSync(join(root, 'protected'), { recursive: true });
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'f'), 'x\n');
  writeFileSync(join(root, 'protected', 'd'), 'x\n');
  writeFileSync(join(root, 'src', 'd'), 'x\n');
  symlinkSync(join(root, 'protected'), join(root, 'link'));
  symlinkSync('src', join(root, 'inside'));
  mkdirSync(join(root, 'other'));
  symlinkSync('../other', join(root, 'src', 'out'));
}

describe('shell write targets through links', () => {
  it('each way of writing into a link to a forbidden folder is denied, and so is reading through one', async () => {
    const certificate = certificateFor({
      allow: ['Bash'],
      forbid: ['Write(protected/**)', 'Read(protected/secret)'],
    });
    const f = await openFixture(certificate, null);
    try {
      project(f.root);
      for (const command of [...WRITES, 'cat link/secret']) {
        const d = await f.boundary.decide(toolBefore('Bash', { command }, f.root), { source: 'hook' });
        assert.equal(d.decision, 'deny', command);
        assert.match(String(d.rule), /protected/, command);
      }
      const records: EventRecord[] = await f.records();
      assert.deepEqual(records[0]?.resolved, [
        { path: join(f.root, 'link/a'), resolved: join(f.root, 'protected/a') },
      ]);
      assert.deepEqual(
        records[1]?.resolved?.map((r) => r.resolved),
        [join(f.root, 'protected/b')],
      );
      // Offline, from the record alone: every one of them is forbidden.
      const offline = crossVerify(certificate, records);
      assert.deepEqual(
        offline.unauthorized.map((c) => [(c.input as { command: string }).command, c.verdict]),
        [...WRITES, 'cat link/secret'].map((command) => [command, 'forbidden']),
      );
      // The oracle: bash writes where the link leads.
      execFileSync('bash', ['-c', 'echo x > link/a'], { cwd: f.root });
      assert.ok(existsSync(join(f.root, 'protected', 'a')));
    } finally {
      await f.close();
    }
  });

  it('a link that leads inside an allowed place stays allowed, live and offline', async () => {
    const certificate = certificateFor({
      allow: ['Bash(echo *)', 'Bash(cp *)', 'Write(src/**)', 'Write(inside/**)'],
      forbid: ['Write(protected/**)'],
    });
    const f = await openFixture(certificate, null);
    try {
      project(f.root);
      for (const command of ['echo x > inside/a', 'cp f inside/b']) {
        const d = await f.boundary.decide(toolBefore('Bash', { command }, f.root), { source: 'hook' });
        assert.equal(d.decision, 'allow', `${command}: ${d.reason}`);
      }
      // A link out of the allowed place: the allow of the path as written does not cover where it leads.
      const out = await f.boundary.decide(toolBefore('Bash', { command: 'echo x > src/out/z' }, f.root), {
        source: 'hook',
      });
      assert.equal(out.decision, 'deny');
      const offline = crossVerify(certificate, await f.records());
      assert.deepEqual(
        offline.unauthorized.map((c) => [(c.input as { command: string }).command, c.verdict]),
        [['echo x > src/out/z', 'outside']],
      );
    } finally {
      await f.close();
    }
  });
  it('a `..` after a link is judged where the kernel takes it, live and offline', async () => {
    const certificate = certificateFor({ allow: ['Bash', 'Write(**)'], forbid: ['Write(protected/**)'] });
    const f = await openFixture(certificate, null);
    try {
      // `lnk -> x/d` and `x/y -> ../protected`: `lnk/../y` is `x/y` to the kernel, `y` as text.
      mkdirSync(join(f.root, 'protected'), { recursive: true });
      mkdirSync(join(f.root, 'x', 'd'), { recursive: true });
      symlinkSync('../protected', join(f.root, 'x', 'y'));
      symlinkSync('x/d', join(f.root, 'lnk'));
      const calls: [string, Record<string, unknown>][] = [
        ['Bash', { command: 'echo x > lnk/../y/a' }],
        ['Bash', { command: 'mkdir -p n && echo x > n/../lnk/../y/b' }],
        // Qwen Code and OpenCode hand an absolute path to the file system as given.
        ['write_file', { file_path: `${f.root}/lnk/../y/c` }],
        ['write', { filePath: `${f.root}/lnk/../y/d` }],
      ];
      for (const [name, input] of calls) {
        const d = await f.boundary.decide(toolBefore(name, input, f.root), { source: 'hook' });
        assert.equal(d.decision, 'deny', JSON.stringify(input));
      }
      // A `..` after a plain folder is where the text says.
      const plain = await f.boundary.decide(toolBefore('Bash', { command: 'echo x > x/d/../z' }, f.root), {
        source: 'hook',
      });
      assert.equal(plain.decision, 'allow', plain.reason);
      const records: EventRecord[] = await f.records();
      assert.deepEqual(records[0]?.resolved, [
        { path: join(f.root, 'y/a'), resolved: join(f.root, 'protected/a') },
      ]);
      const offline = crossVerify(certificate, records);
      assert.equal(offline.unauthorized.length, calls.length);
      // The oracle: bash writes into protected/.
      execFileSync('bash', ['-c', 'echo x > lnk/../y/a'], { cwd: f.root });
      assert.ok(existsSync(join(f.root, 'protected', 'a')));
    } finally {
      await f.close();
    }
  });
});
