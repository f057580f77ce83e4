/**
 * The real Claude Code with `--mcp-config` pointing at `tally mcp -- <filesystem server>`: the
 * scripted model writes a file through `mcp__fs__write_file` (it lands on disk) and then one the
 * certificate forbids (Claude Code's tool result carries Tally's reason, the file never appears);
 * the session's package verifies against the certificate, with the write witnessed by `mcp`. And
 * the same server configured directly, no gateway, under `tally run`: Claude Code's own hooks carry
 * each `mcp__fs__…` call, judged by its kind (a write of the path it names).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FS_SERVER } from '../capture/mcp-fixture.js';
import { TALLY_BIN } from '../cli/tally-process.js';
import {
  assertNotesNotKey,
  assertOnlyDenialIsTheKey,
  assertSealedWithGatewayDenial,
  FORBIDDEN_RULE,
  MCP_CERTIFICATE,
  mcpSession,
  notesThenKey,
} from './mcp-flow.js';
import { call } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { type AgentRun, runAgent } from './runner.js';
import {
  receiptOf,
  runSummary,
  tallyProject,
  underTallyRun,
  verifiedUnderCertificate,
} from './tally-flow.js';
import { stopRecorder } from './tally-run-check.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

function toolResults(body: unknown): Record<string, unknown>[] {
  return asArray(asRecord(body)?.messages)
    .flatMap((m) => asArray(asRecord(m)?.content))
    .map((b) => asRecord(b) ?? {})
    .filter((b) => b.type === 'tool_result');
}

const script = (dir: string) => notesThenKey(dir, (args) => call('mcp__fs__write_file', args));

/** The allowed write landed and the forbidden one did not; the two tool results the model saw. */
function notesWrittenKeyNot(run: AgentRun, dir: string): Record<string, unknown>[] {
  assertNotesNotKey(dir);
  const results = toolResults(run.requests.at(-1)?.body);
  assert.equal(results.length, 2, JSON.stringify(results));
  assert.notEqual(results[0]!.is_error, true, JSON.stringify(results[0]));
  return results;
}

describe('Claude Code through the MCP gateway (real CLI, scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('writes through mcp__fs__write_file, is denied a forbidden write, and the receipt verifies', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'secret/.keep': '' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await mcpSession(repo.dir, home);
      const config = join(home, 'mcp.json');
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            fs: {
              type: 'stdio',
              command: process.execPath,
              args: [TALLY_BIN, 'mcp', '--name', 'fs', '--', process.execPath, FS_SERVER, repo.dir],
              env: { TALLY_HOME: project.env.TALLY_HOME! },
            },
          },
        }),
      );
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write the notes, then the key.',
        script: script(repo.dir),
        env: { TALLY_HOME: project.env.TALLY_HOME! },
        args: ['--mcp-config', config, '--strict-mcp-config'],
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-400)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const results = notesWrittenKeyNot(run, repo.dir);
      assert.equal(results[1]!.is_error, true, JSON.stringify(results[1]));
      assert.match(JSON.stringify(results[1]!.content), FORBIDDEN_RULE);

      await assertSealedWithGatewayDenial(project);
    } finally {
      repo.cleanup();
      removeTempDir(home);
    }
  });

  it('without the gateway, under tally run: the native hooks judge each MCP call by its kind', async (t) => {
    const repo = makeRepo({ files: { 'README.md': '# demo\n', 'secret/.keep': '' } });
    const home = makeTempDir('tally-home');
    try {
      const project = await tallyProject(repo.dir, home, MCP_CERTIFICATE);
      const config = join(home, 'mcp.json');
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: { fs: { type: 'stdio', command: process.execPath, args: [FS_SERVER, repo.dir] } },
        }),
      );
      const run = await runAgent({
        agent: 'claude-code',
        cwd: repo.dir,
        prompt: 'Write the notes, then the key.',
        script: script(repo.dir),
        env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
        args: ['--mcp-config', config, '--strict-mcp-config'],
        wrap: underTallyRun,
      });
      t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
      assert.equal(run.exitCode, 0, run.stderr);
      const results = notesWrittenKeyNot(run, repo.dir);
      // What the model sees: Tally's reason, carried by Claude Code's own hook denial.
      assert.match(JSON.stringify(results[1]!.content), /forbidden pattern/);
      const summary = runSummary(run.stdout);
      assert.equal(summary.verified, true, JSON.stringify(summary));
      // The one unauthorized call is the forbidden write, and it was blocked: none ran.
      const verified = await verifiedUnderCertificate(project, String(summary.package));
      const unauthorized = (
        verified.checks as { check: string; detail: { calls?: { blocked: boolean }[] } }[]
      ).find((c) => c.check === 'unauthorized_calls')!;
      assert.deepEqual(
        unauthorized.detail.calls?.map((c) => c.blocked),
        [true],
        JSON.stringify(unauthorized),
      );
      assertOnlyDenialIsTheKey(await receiptOf(project, String(summary.package)));
    } finally {
      await stopRecorder(repo.dir, home);
      repo.cleanup();
      removeTempDir(home);
    }
  });
});
