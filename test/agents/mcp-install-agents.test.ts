/**
 * `tally install <agent> --mcp` on the real pinned CLIs: the project's own MCP file names the real
 * filesystem server; after the install the agent, run offline against the scripted model, loads
 * the rewritten file and its calls of the server's write_file go through the gateway — the
 * allowed write lands, the forbidden one is denied with Tally's reason in the tool result the model
 * reads and never happens — and the sealed package verifies with the gateway's denial. Then
 * `tally uninstall <agent> --mcp` puts the file back byte for byte. One run per agent; each names
 * the server's tool its own way (Codex: the namespace `mcp__fs`; Gemini CLI: `mcp_fs_write_file`;
 * Qwen Code: its deferred-tool bridge `tool_call` with `mcp__fs__write_file`; OpenCode:
 * `fs_write_file`).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FS_SERVER } from '../capture/mcp-fixture.js';
import { jsonOut } from '../cli/tally-process.js';
import type { AgentName } from './install.js';
import {
  assertNotesNotKey,
  assertSealedWithGatewayDenial,
  FORBIDDEN_RULE,
  mcpSession,
  notesThenKey,
} from './mcp-flow.js';
import { call, namespacedCall, type Step } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import { toolResults } from './tally-flow.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

interface Case {
  agent: AgentName;
  /** The agent's project file of MCP servers. */
  file: string;
  /** Its text, with the filesystem server for `dir` configured directly. */
  text: (dir: string) => string;
  /** The agent's call of the server's write_file. */
  write: (args: Record<string, unknown>) => Step;
  /** The agent's own (user) settings for the run. */
  settings?: (dir: string) => Record<string, unknown>;
  /**
   * After uninstall: the file as it was, or — for an agent that edits its own file when it starts
   * (Qwen Code adds `$version`, OpenCode `$schema`) — its server entry as it was, what it added kept.
   */
  restored: (now: string, original: string) => void;
}

const server = (dir: string) => [process.execPath, FS_SERVER, dir];
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const asWritten = (now: string, original: string) => assert.equal(now, original);
const sameServers = (now: string, original: string) =>
  assert.deepEqual(JSON.parse(now).mcpServers, JSON.parse(original).mcpServers);

const CASES: Case[] = [
  {
    agent: 'codex',
    file: '.codex/config.toml',
    // Codex hands a server only a few variables of its own: TALLY_HOME is named to pass it on.
    text: (dir) =>
      [
        '# The project’s MCP servers.',
        '[mcp_servers.fs]',
        `command = ${JSON.stringify(process.execPath)}`,
        `args = [${JSON.stringify(FS_SERVER)}, ${JSON.stringify(dir)}] # the work tree`,
        'env_vars = ["TALLY_HOME"]',
        '',
      ].join('\n'),
    write: (args) => namespacedCall('mcp__fs', 'write_file', args),
    // Codex reads a project's .codex/config.toml only when the project is trusted.
    settings: (dir) => ({ projects: { [dir]: { trust_level: 'trusted' } } }),
    restored: asWritten,
  },
  {
    agent: 'gemini-cli',
    file: '.gemini/settings.json',
    text: (dir) => json({ mcpServers: { fs: { command: process.execPath, args: server(dir).slice(1) } } }),
    write: (args) => call('mcp_fs_write_file', args),
    restored: asWritten,
  },
  {
    agent: 'qwen-code',
    file: '.qwen/settings.json',
    text: (dir) => json({ mcpServers: { fs: { command: process.execPath, args: server(dir).slice(1) } } }),
    write: (args) => call('tool_call', { name: 'mcp__fs__write_file', arguments: args }),
    restored: sameServers,
  },
  {
    agent: 'opencode',
    file: 'opencode.jsonc',
    text: (dir) =>
      `{\n  // The project’s MCP servers.\n  "mcp": {\n    "fs": { "type": "local", "command": ${JSON.stringify(server(dir))} },\n  },\n}\n`,
    write: (args) => call('fs_write_file', args),
    restored: (now, original) => {
      assert.equal(now.replace(/^ {2}"\$schema": .*\n/m, ''), original);
    },
  },
];

describe('tally install <agent> --mcp, run by the real agents (scripted model)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  for (const c of CASES)
    it(`${c.agent}: its calls go through the gateway; uninstall puts ${c.file} back`, async (t) => {
      const repo = makeRepo({ files: { 'README.md': '# demo\n', 'secret/.keep': '' } });
      const home = makeTempDir('tally-home');
      const path = join(repo.dir, c.file);
      const original = c.text(repo.dir);
      try {
        const project = await mcpSession(repo.dir, home, async (p) => {
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, original);
          const installed = jsonOut(await p.tally(['install', c.agent, '--mcp', '--json']));
          assert.deepEqual(installed.wrapped, ['fs']);
        });
        const run = await runAgent({
          agent: c.agent,
          cwd: repo.dir,
          prompt: 'Write the notes, then the key.',
          script: notesThenKey(repo.dir, c.write),
          env: { TALLY_HOME: project.env.TALLY_HOME! },
          ...(c.settings ? { settings: c.settings(repo.dir) } : {}),
        });
        t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-600)}`);
        assert.equal(run.exitCode, 0, run.stderr);
        assertNotesNotKey(repo.dir);
        const results = toolResults(run);
        t.diagnostic(`tool results: ${results.join(' | ').slice(0, 900)}`);
        assert.equal(results.filter((r) => FORBIDDEN_RULE.test(r)).length, 1, results.join('\n'));
        await assertSealedWithGatewayDenial(project);

        const removed = jsonOut(await project.tally(['uninstall', c.agent, '--mcp', '--json']));
        assert.deepEqual(removed.restored, ['fs']);
        c.restored(readFileSync(path, 'utf8'), original);
      } finally {
        repo.cleanup();
        removeTempDir(home);
      }
    });
});
