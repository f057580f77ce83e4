/**
 * Cursor's hooks, tested with payloads built from its documented format: no Cursor CLI runs here.
 * `tally install cursor` writes `.cursor/hooks.json`; each hook's command is then run exactly as
 * Cursor runs it (through a shell, the payload on stdin, the answer on stdout) against the real
 * recorder: the first prompt starts the recorder, a redirection into protected/ is denied with
 * the reason for the model, an allowed one is allowed, a read file's content is never recorded,
 * and `tally uninstall cursor` leaves the user's own hooks.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonOut, runTally } from '../cli/tally-process.js';
import { logContent } from '../log-content.js';
import { makeRepo } from './repo.js';
import { tallyProject } from './tally-flow.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

/** Runs one hook command as Cursor does: `sh -c`, the payload on stdin; its stdout parsed. */
function runHook(
  command: string,
  payload: unknown,
  env: Record<string, string>,
  cwd: string,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        assert.equal(code, 0, err);
        resolve(JSON.parse(out || '{}') as Record<string, unknown>);
      } catch (error) {
        reject(new Error(`${(error as Error).message}; stdout ${out}; stderr ${err}`));
      }
    });
    child.stdin.end(JSON.stringify(payload));
  });
}

describe('Cursor hooks (documented format, real recorder)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('installed hooks answer as Cursor documents, deny the forbidden, record no file content, uninstall cleanly', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# demo\n',
        'protected/keep.txt': 'k\n',
        '.env': 'API_KEY=sk-live-0123456789abcdef\n',
      },
    });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home);
      const env = { ...project.env, TALLY_RECORDER_IDLE_MS: '60000' };
      const mine = { version: 1, hooks: { afterFileEdit: [{ command: './format.sh' }] } };
      mkdirSync(join(repo.dir, '.cursor'));
      writeFileSync(join(repo.dir, '.cursor', 'hooks.json'), JSON.stringify(mine));
      const installed = await runTally(['install', 'cursor', '--agent', 'coder', '--json'], {
        cwd: repo.dir,
        env,
      });
      assert.equal(installed.code, 0, installed.stderr);
      const file = JSON.parse(readFileSync(join(repo.dir, '.cursor', 'hooks.json'), 'utf8')) as {
        version: number;
        hooks: Record<string, { command: string }[]>;
      };
      assert.equal(file.version, 1);
      assert.deepEqual(
        file.hooks.afterFileEdit![0],
        { command: './format.sh' },
        'the user’s hook first, kept',
      );
      const command = (event: string) => file.hooks[event]!.at(-1)!.command;
      const common = {
        conversation_id: 'conv-1',
        generation_id: 'gen-1',
        workspace_roots: [repo.dir],
      };
      // The first prompt starts the recorder (Cursor has no session start event).
      const prompt = await runHook(
        command('beforeSubmitPrompt'),
        { ...common, hook_event_name: 'beforeSubmitPrompt', prompt: 'go' },
        env,
        repo.dir,
      );
      assert.deepEqual(prompt, { continue: true });
      const denied = await runHook(
        command('beforeShellExecution'),
        {
          ...common,
          hook_event_name: 'beforeShellExecution',
          command: 'echo x > protected/a',
          cwd: repo.dir,
        },
        env,
        repo.dir,
      );
      assert.equal(denied.permission, 'deny');
      assert.match(String(denied.agent_message), /forbidden pattern/);
      const allowed = await runHook(
        command('beforeShellExecution'),
        { ...common, hook_event_name: 'beforeShellExecution', command: 'echo hi > hello.txt', cwd: repo.dir },
        env,
        repo.dir,
      );
      assert.equal(allowed.permission, 'allow');
      await runHook(
        command('beforeReadFile'),
        {
          ...common,
          hook_event_name: 'beforeReadFile',
          file_path: join(repo.dir, '.env'),
          content: 'API_KEY=sk-live-0123456789abcdef\n',
        },
        env,
        repo.dir,
      );
      // Cursor has no before-edit hook: an edit into protected/ reaches Tally only once it is made.
      writeFileSync(join(repo.dir, 'protected/edited.txt'), 'edited\n');
      assert.deepEqual(
        await runHook(
          command('afterFileEdit'),
          {
            ...common,
            hook_event_name: 'afterFileEdit',
            file_path: join(repo.dir, 'protected/edited.txt'),
            edits: [{ old_string: '', new_string: 'edited\n' }],
          },
          env,
          repo.dir,
        ),
        {},
      );
      // What the recorder wrote: the deny is there, the file's content is not.
      const sessions = join(repo.dir, '.tally', 'sessions');
      const [id] = readdirSync(sessions).filter((d) => d.startsWith('ses_'));
      const decoded = logContent(join(sessions, id!, 'events.log'))
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString());
      assert.ok(decoded.some((r) => r.includes('"Write(protected/**)"') && r.includes('"deny"')));
      assert.ok(!decoded.some((r) => r.includes('sk-live-0123456789abcdef')), 'no file content recorded');
      // The edit that could not be stopped is recorded, and verification fails on it, named.
      const closed = jsonOut(await runTally(['session', 'close', '--json'], { cwd: repo.dir, env }));
      const verify = await runTally(['verify', String(closed.package), '--certificate', 'coder', '--json'], {
        cwd: repo.dir,
        env,
      });
      assert.equal(verify.code, 1, verify.stdout);
      const unauthorized = (
        jsonOut(verify).checks as {
          check: string;
          ok: boolean;
          detail: { executed: number; calls: { tool: string; verdict: string; blocked: boolean }[] };
        }[]
      ).find((c) => c.check === 'unauthorized_calls')!;
      assert.equal(unauthorized.ok, false);
      assert.equal(unauthorized.detail.executed, 1, JSON.stringify(unauthorized.detail));
      assert.deepEqual(
        unauthorized.detail.calls.filter((c) => !c.blocked).map((c) => [c.tool, c.verdict]),
        [['Edit', 'forbidden']],
      );
      // And install said so, among what Cursor cannot express.
      assert.match(JSON.stringify(jsonOut(installed).cannot_express), /no before-edit hook/);
      const removed = await runTally(['uninstall', 'cursor'], { cwd: repo.dir, env });
      assert.equal(removed.code, 0, removed.stderr);
      assert.deepEqual(JSON.parse(readFileSync(join(repo.dir, '.cursor', 'hooks.json'), 'utf8')), mine);
    } finally {
      await runTally(['recorder', 'stop'], { cwd: repo.dir, env: recorderEnv(home) });
      repo.cleanup();
      removeTempDir(home);
    }
  });
});

function recorderEnv(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: home, TALLY_HOME: join(home, 'tally') };
}
