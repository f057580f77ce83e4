/**
 * The recorder SIGKILLed in the middle of a real Claude Code session under `tally run`. The agent's
 * own shell command kills it right after creating a file, so the PostToolUse hook of that call is
 * lost (http hooks have no spool; it fails open); the next tool's PreToolUse finds the recorder down
 * and is blocked (fail-closed) — a call no hook reported. `tally run` starts the recorder again and
 * the session goes on. At close the agent's transcript (a real one, written by the real CLI)
 * supplies what the hooks lost, with source `transcript`, and the reconcile pass the file the
 * shell command made. Oracles: the files on disk, the transcript Claude Code wrote (its tool uses
 * and results), the certificate, the verifier.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Receipt } from '../../src/evidence/receipt/receipt.js';
import { runTally } from '../cli/tally-process.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));

function packageRecords(pkg: string): Record<string, unknown>[] {
  const lines = readFileSync(pkg, 'utf8').trimEnd().split('\n');
  return lines
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString()));
}

function receiptOf(pkg: string): Receipt {
  const lines = readFileSync(pkg, 'utf8').trimEnd().split('\n');
  const seal = JSON.parse(lines.at(-1)!) as { receipt: { payload: string } };
  return JSON.parse(Buffer.from(seal.receipt.payload, 'base64').toString('utf8')) as Receipt;
}

function recorderPid(tallyHome: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(tallyHome, 'run', 'recorder.pid'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('recorder SIGKILLed mid-session (real Claude Code under tally run)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('every change is still in the receipt, each with the source that really saw it; what only the transcript saw is flagged', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const home = makeTempDir('tally-home');
    const tallyHome = join(home, 'tally');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TALLY_HOME: tallyHome,
      TALLY_RECORDER_IDLE_MS: '6000',
    };
    const killer =
      "node -e \"const f=process.env.TALLY_HOME+'/run/recorder.pid';process.kill(JSON.parse(require('fs').readFileSync(f,'utf8')).pid,'SIGKILL')\"";
    let killed: number | null = null;
    try {
      for (const args of [
        ['init'],
        [
          'agent',
          'register',
          '--name',
          'coder',
          '--allow',
          'Write',
          '--allow',
          'Bash(echo *)',
          '--allow',
          'Bash(node *)',
          // The killer is `node -e`, opaque: with the control plane open and no forbid, the allows decide.
          '--control-plane',
          'allow',
        ],
      ]) {
        const ran = await runTally(args, { cwd: repo.dir, env });
        assert.equal(ran.code, 0, ran.stderr);
      }
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write, then make lost.txt, then more writes.',
        permissive: false,
        script: {
          steps: [
            call('Write', { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' }),
            call('Bash', { command: `echo made > lost.txt && ${killer}`, description: 'make and kill' }),
            call('Write', { file_path: join(repo.dir, 'blocked.txt'), content: 'never\n' }),
            call('Write', { file_path: join(repo.dir, 'after.txt'), content: 'after\n' }),
            text('Done.'),
          ],
          beforeStep: async (k, thread) => {
            if (thread !== 'main') return;
            if (k === 2) {
              // Answered while the recorder is down: the Write's PreToolUse cannot reach it. Kill
              // the recorder again in case it was already restarted, and wait until it is gone.
              killed = recorderPid(tallyHome);
              if (killed !== null && alive(killed)) process.kill(killed, 'SIGKILL');
              while (killed !== null && alive(killed)) await new Promise((r) => setTimeout(r, 20));
            }
            if (k === 3) {
              // Wait until tally run has started a new recorder, so the rest is recorded again.
              for (;;) {
                const pid = recorderPid(tallyHome);
                const status = await runTally(['recorder', 'status', '--json'], { cwd: repo.dir, env });
                if (pid !== null && pid !== killed && status.code === 0) break;
                await new Promise((r) => setTimeout(r, 100));
              }
            }
          },
        },
        env,
        wrap: (bin, argv) => [
          process.execPath,
          [TALLY, 'run', '--agent', 'coder', '--json', '--', bin, ...argv],
        ],
      });
      t.diagnostic(
        `exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-800)}; stdout: ${run.stdout.slice(-1500)}`,
      );
      assert.equal(run.exitCode, 0, run.stderr);
      const summary = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('\n{') + 1 || 0)) as Record<
        string,
        unknown
      >;
      assert.equal(summary.verified, true, JSON.stringify(summary));
      assert.match(run.stderr, /recorder stopped; starting it again/);

      // On disk: the shell made lost.txt; the Write that met the dead recorder did not run.
      assert.equal(repo.read('lost.txt'), 'made\n');
      assert.ok(
        !existsSync(join(repo.dir, 'blocked.txt')),
        'a tool ran while its PreToolUse could not be judged',
      );
      assert.equal(repo.read('after.txt'), 'after\n');

      // The transcript Claude Code wrote: the oracle for which tool uses happened and how they ended.
      // (The agent's HOME is the run's own `home` here, so its transcript is under it.)
      const projects = join(home, '.claude', 'projects');
      const files = (readdirSync(projects, { recursive: true }) as string[]).filter(
        (f) => f.endsWith('.jsonl') && !f.includes('subagents'),
      );
      assert.equal(files.length, 1, `transcripts: ${files.join(', ')}`);
      const transcript = readFileSync(join(projects, files[0]!), 'utf8');
      const uses = new Map<string, { name: string; error?: boolean }>();
      for (const line of transcript.split('\n').filter(Boolean)) {
        const parsed = JSON.parse(line) as { type?: string; message?: { content?: unknown } };
        const content = Array.isArray(parsed.message?.content)
          ? (parsed.message.content as Record<string, unknown>[])
          : [];
        for (const b of content) {
          if (parsed.type === 'assistant' && b.type === 'tool_use')
            uses.set(String(b.id), { name: String(b.name) });
          if (parsed.type === 'user' && b.type === 'tool_result') {
            const use = uses.get(String(b.tool_use_id));
            if (use) use.error = b.is_error === true;
          }
        }
      }
      const [writeA, bash, blocked, writeAfter] = [...uses.keys()];
      assert.equal(uses.get(blocked!)?.name, 'Write');
      assert.equal(uses.get(blocked!)?.error, true, 'the transcript shows the blocked Write failed');

      const recs = packageRecords(String(summary.package));
      const bySource = (id: string) =>
        recs
          .filter((r) => (r.event as { call?: { id?: string } }).call?.id === id)
          .map((r) => `${r.source}:${(r.event as { type: string }).type}`);
      assert.deepEqual(bySource(writeA!), ['hook:tool.before', 'hook:tool.after']);
      // The Bash call: judged and recorded before it ran; its end lost with the recorder, recovered
      // from the transcript.
      assert.deepEqual(bySource(bash!), ['hook:tool.before', 'transcript:tool.after']);
      // The blocked Write: no hook reached Tally at all; only the transcript saw it.
      assert.deepEqual(bySource(blocked!), ['transcript:tool.after']);
      assert.deepEqual(bySource(writeAfter!), ['hook:tool.before', 'hook:tool.after']);

      const receipt = receiptOf(String(summary.package));
      const rows = new Map(receipt.files_written.map((r) => [r.path, r]));
      t.diagnostic(JSON.stringify(receipt.files_written.map((r) => [r.path, r.operation, r.sources])));
      assert.deepEqual([...rows.keys()].sort(), ['a.txt', 'after.txt', 'lost.txt']);
      assert.deepEqual(rows.get('a.txt')?.sources, ['git-reconcile', 'hook']);
      assert.deepEqual(rows.get('after.txt')?.sources, ['git-reconcile', 'hook']);
      // Only the tree's pass saw the file the shell command made.
      assert.deepEqual(rows.get('lost.txt')?.sources, ['git-reconcile']);
      assert.equal(rows.get('lost.txt')?.operation, 'created');
      const write = receipt.tool_calls.find((r) => r.tool === 'Write');
      assert.ok(write?.sources.includes('transcript'), JSON.stringify(write));
      // One call, one count: the transcript's end of a call joins the hook's beginning of it.
      assert.equal(write?.count, [...uses.values()].filter((u) => u.name === 'Write').length);
      assert.equal(receipt.counts.tool_calls, uses.size);
      const blockedRecord = recs.find((r) => (r.event as { call?: { id?: string } }).call?.id === blocked);
      assert.ok(blockedRecord);
      const ext = (
        blockedRecord.event as { extensions: Record<string, { seen_only_in_transcript: boolean }> }
      ).extensions;
      assert.equal(ext['dev.tally.transcript']?.seen_only_in_transcript, true);
      // Claude Code's own words in the transcript say a hook stopped it: recorded as not run.
      assert.equal((blockedRecord.event as { outcome?: string }).outcome, 'denied');
      const processRow = receipt.processes.find((p) => p.call === bash);
      assert.deepEqual(processRow?.sources, ['hook', 'transcript']);

      const verify = await runTally(['verify', String(summary.package), '--certificate', 'coder', '--json'], {
        cwd: repo.dir,
        env,
      });
      assert.equal(verify.code, 0, verify.stdout);
    } finally {
      await runTally(['recorder', 'stop'], { cwd: repo.dir, env });
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
