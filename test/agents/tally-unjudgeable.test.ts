/**
 * A tool call whose hook payload Tally cannot read as strict JSON — an argument the model added
 * carrying an integer beyond 2^53 - 1, which the real OpenCode passes through to its plugin — is
 * stopped in OpenCode's own answer and recorded in the session as rejected, not refused as a bad
 * request the plugin can only spool.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { logContent } from '../log-content.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { tallyProject, toolResults } from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

/** 2^53 + 2: JSON.stringify prints it as is, an integer beyond 2^53 - 1, so not strict JSON for Tally. */
const HUGE = 2 ** 53 + 2;

describe('OpenCode: a payload Tally cannot read (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('a bash call with an out-of-range integer argument is denied and recorded as rejected', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home);
      const installed = await project.tally(['install', 'opencode', '--agent', 'coder', '--json']);
      assert.equal(installed.code, 0, installed.stderr);
      const run = await runAgent({
        agent: 'opencode',
        cwd: repo.dir,
        prompt: 'Write into protected/.',
        script: [
          call('bash', { command: 'echo x > protected/a', description: 'write', note: HUGE }),
          text('Done.'),
        ],
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '120000' },
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      const results = toolResults(run);
      t.diagnostic(`tool results: ${results.join(' | ').slice(0, 600)}`);
      assert.equal(existsSync(join(repo.dir, 'protected/a')), false, 'the call did not run');
      assert.ok(
        results.some((r) => r.includes('Tally could not judge this event')),
        results.join('\n'),
      );
      const sessions = join(repo.dir, '.tally', 'sessions');
      const ids = readdirSync(sessions).filter((d) => d.startsWith('ses_'));
      assert.equal(ids.length, 1, JSON.stringify(ids));
      const decoded = logContent(join(sessions, ids[0]!, 'events.log'))
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString());
      assert.ok(
        decoded.some((r) => r.includes('"tally.ingest.rejected"')),
        'the payload is recorded as rejected',
      );
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
