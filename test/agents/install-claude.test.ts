/**
 * `tally install claude-code` proves itself on the real binary: the settings it writes load (Claude
 * Code drops an invalid file silently, so only a run shows it), the hooks fire into the recorder,
 * the judge's deny stops the call; the user's own settings survive, and `tally uninstall` removes
 * only what Tally added.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonOut, runTally } from '../cli/tally-process.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

describe('tally install claude-code (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  for (const transport of ['http', 'command'] as const) {
    it(`${transport} hooks written into the project's settings fire in the real agent and stop a forbidden call`, async () => {
      const repo = makeRepo({ files: { 'README.md': '# demo\n', 'keep/x.txt': 'keep\n' } });
      const home = makeTempDir('tally-home');
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        TALLY_HOME: join(home, 'tally'),
        // Long enough for a loaded machine's gaps between hooks (nothing restarts it here); stopped below.
        TALLY_RECORDER_IDLE_MS: '30000',
      };
      try {
        for (const args of [
          ['init'],
          // A redirection into a file is a write: the certificate allows that file as well.
          [
            'agent',
            'register',
            '--name',
            'coder',
            '--allow',
            'Bash(echo *)',
            '--allow',
            'Write(hello.txt)',
            '--forbid',
            'Bash(rm -rf *)',
          ],
        ])
          assert.equal((await runTally(args, { cwd: repo.dir, env })).code, 0);
        // The user's own settings: a permission rule and a hook of theirs, kept through install and uninstall.
        const userHook = { type: 'command', command: 'true' };
        const settingsPath = join(repo.dir, '.claude', 'settings.json');
        mkdirSync(join(repo.dir, '.claude'));
        writeFileSync(
          settingsPath,
          JSON.stringify({ permissions: { allow: ['Read'] }, hooks: { Stop: [{ hooks: [userHook] }] } }),
        );
        const secret = jsonOut(await runTally(['recorder', 'env', '--json'], { cwd: repo.dir, env }))
          .TALLY_RECORDER_SECRET as string;
        const installed = await runTally(
          ['install', 'claude-code', '--agent', 'coder', '--transport', transport, '--json'],
          {
            cwd: repo.dir,
            env,
          },
        );
        assert.equal(installed.code, 0, installed.stderr);
        const written = JSON.parse(readFileSync(settingsPath, 'utf8')) as {
          permissions: unknown;
          hooks: Record<string, unknown[]>;
        };
        assert.deepEqual(written.permissions, { allow: ['Read'] });
        const run = await runAgent({
          agent: 'claude-code',
          cwd: repo.dir,
          prompt: 'Say hello, then clean up.',
          permissive: false,
          script: [
            call('Bash', { command: 'echo hello > hello.txt', description: 'hello' }),
            call('Bash', { command: 'rm -rf keep', description: 'clean' }),
            text('Done.'),
          ],
          env: { ...env, TALLY_RECORDER_SECRET: secret },
        });
        assert.equal(run.exitCode, 0, run.stderr);
        assert.equal(
          readFileSync(join(repo.dir, 'hello.txt'), 'utf8'),
          'hello\n',
          'the certificate allowed echo',
        );
        assert.ok(existsSync(join(repo.dir, 'keep/x.txt')), 'rm -rf was stopped');
        const status = jsonOut(await runTally(['recorder', 'status', '--json'], { cwd: repo.dir, env })) as {
          sessions: { session: string }[];
        };
        // SessionEnd sealed the session the recorder opened for this harness session.
        const listed = (await runTally(['session', 'status', '--json'], { cwd: repo.dir, env })).stdout;
        void listed;
        const packages = join(repo.dir, '.tally', 'packages');
        for (let i = 0; i < 50 && !existsSync(packages); i++) await new Promise((r) => setTimeout(r, 100));
        assert.ok(existsSync(packages), `a package was sealed (recorder: ${JSON.stringify(status)})`);
        const uninstalled = await runTally(['uninstall', 'claude-code'], { cwd: repo.dir, env });
        assert.equal(uninstalled.code, 0);
        assert.deepEqual(JSON.parse(readFileSync(settingsPath, 'utf8')), {
          permissions: { allow: ['Read'] },
          hooks: { Stop: [{ hooks: [userHook] }] },
        });
      } finally {
        await runTally(['recorder', 'stop'], { cwd: repo.dir, env });
        repo.cleanup();
        removeTempDir(home);
      }
    });
  }
});
