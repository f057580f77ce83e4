/**
 * The transcript `tally run` expects the real Claude Code to write, from a working folder whose name
 * as Claude Code keeps it runs past 200 characters: the pinned version then shortens the project
 * folder's name (the first 200 characters and a hash of the path), and the run must read the file
 * Claude Code really wrote. Oracle: the real CLI's own transcript, found on disk, and the close's
 * summary counting the tool use it holds.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { packageRecords, runSummary, tallyProject, underTallyRun } from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

/** Every `.jsonl` file under `dir`, at any depth. */
function transcriptsUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => join(dir, name));
}

describe('tally run -- claude from a folder with a long path (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('reads the transcript the real Claude Code wrote', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, ['--allow', 'Write']);
      const deep = join(repo.dir, ...Array.from({ length: 9 }, (_, i) => `a-rather-long-folder-name-${i}`));
      mkdirSync(deep, { recursive: true });
      assert.ok(deep.length > 220, `${deep.length} characters`);
      const run = await runAgent({
        agent: 'claude-code',
        cwd: deep,
        prompt: 'Write a.txt.',
        permissive: false,
        script: [call('Write', { file_path: join(deep, 'a.txt'), content: 'alpha\n' }), text('Done.')],
        env: project.env,
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode}; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const summary = runSummary(run.stdout);
      // Where the real CLI wrote it: one transcript, in a folder whose name Claude Code shortened.
      const written = transcriptsUnder(join(home, '.claude', 'projects'));
      assert.equal(written.length, 1, written.join('\n'));
      const folder = written[0]!.split('/').at(-2)!;
      assert.ok(folder.length < deep.length, `the folder is named ${folder}`);
      const read = packageRecords(String(summary.package)).find(
        (r) => (r.event as { type?: string }).type === 'tally.transcript.summary',
      );
      assert.ok(read, 'the close wrote no transcript summary');
      const extensions = (
        read.event as { extensions: Record<string, { transcripts: Record<string, unknown>[] }> }
      ).extensions;
      const entry = extensions['dev.tally.transcript']!.transcripts[0]!;
      assert.equal(entry.path, written[0]);
      assert.equal(entry.files, 1, JSON.stringify(entry));
      assert.equal(entry.tool_uses, 1, JSON.stringify(entry));
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
