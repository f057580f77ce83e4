/**
 * `tally install <agent> --mcp` puts behind the gateway exactly the servers the agent will start by
 * their command. The oracle is each pinned agent's own `mcp list`, which names the transport it
 * chose for every entry: Claude Code by `type` (none or `stdio` runs `command`, a URL beside it
 * notwithstanding), Gemini CLI and Qwen Code by `httpUrl` / `url` first (a set one wins over
 * `command`; an empty one does not count). Every server the agent lists as stdio after the install
 * runs Tally's gateway, and every one Tally reports wrapped is one the agent lists as stdio; the
 * others are named as skipped. No model runs: `mcp list` only reads the configuration.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonOut, runTally, TALLY_BIN } from '../cli/tally-process.js';
import { type AgentName, ensureAgent } from './install.js';
import { makeRepo } from './repo.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const URL = 'http://127.0.0.1:9/mcp';

/** Entries each agent could read either way. */
const SERVERS = {
  plain: { command: '/bin/true', args: ['plain'] },
  both: { command: '/bin/true', args: ['both'], url: URL },
  typed: { type: 'http', command: '/bin/true', args: ['typed'], url: URL },
  typedNoUrl: { type: 'http', command: '/bin/true', args: ['typed-no-url'] },
  stdioTyped: { type: 'stdio', command: '/bin/true', args: ['stdio-typed'], url: URL },
  httpUrl: { command: '/bin/true', args: ['http-url'], httpUrl: URL },
  emptyUrl: { command: '/bin/true', args: ['empty-url'], url: '' },
};

const CASES: { agent: AgentName; file: string; servers: (keyof typeof SERVERS)[] }[] = [
  { agent: 'claude-code', file: '.mcp.json', servers: ['plain', 'both', 'typed', 'stdioTyped'] },
  {
    agent: 'gemini-cli',
    file: '.gemini/settings.json',
    servers: ['plain', 'both', 'typedNoUrl', 'httpUrl', 'emptyUrl'],
  },
  {
    agent: 'qwen-code',
    file: '.qwen/settings.json',
    servers: ['plain', 'both', 'typedNoUrl', 'httpUrl', 'emptyUrl'],
  },
];

/** `<agent> mcp list`: each server's name and whether it is stdio, with the command it runs. */
async function listed(bin: string, cwd: string, home: string): Promise<Map<string, string | null>> {
  const child = spawn(bin, ['mcp', 'list'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: home, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  await new Promise((resolve) => child.once('close', resolve));
  const servers = new Map<string, string | null>();
  // "name: <command or URL> [(transport)] - status"; a URL, or "(http)"/"(sse)"/"(HTTP)", is remote.
  for (const line of out.replace(/\u001b\[[0-9;]*m/g, '').split('\n')) {
    const m = /^\W*\s*(\w+): (.*?)(?: \((\w+)\))? - /.exec(line);
    if (!m) continue;
    const remote = m[2]!.startsWith('http') || (m[3] !== undefined && m[3] !== 'stdio');
    servers.set(m[1]!, remote ? null : m[2]!.trim());
  }
  return servers;
}

describe('tally install <agent> --mcp wraps exactly what the agent runs by its command', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));
  for (const { agent, file, servers } of CASES)
    it(`${agent}: the servers its own mcp list runs as stdio, and only those`, async () => {
      const { bin } = await ensureAgent(agent);
      const home = makeTempDir(`mcp-transport-${agent}`);
      const repo = makeRepo({ files: {} });
      try {
        const path = join(repo.dir, file);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(
          path,
          `${JSON.stringify({ mcpServers: Object.fromEntries(servers.map((s) => [s, SERVERS[s]])) }, null, 2)}\n`,
        );
        const before = await listed(bin, repo.dir, home);
        assert.deepEqual([...before.keys()].sort(), [...servers].sort(), `${agent} lists every entry`);
        const env = { PATH: process.env.PATH ?? '', HOME: home, TALLY_HOME: join(home, 'tally') };
        assert.equal((await runTally(['init'], { cwd: repo.dir, env })).code, 0);
        const report = jsonOut(await runTally(['install', agent, '--mcp', '--json'], { cwd: repo.dir, env }));
        const stdio = servers.filter((s) => before.get(s) !== null);
        assert.deepEqual(report.wrapped, stdio, `wrapped: what ${agent} runs by its command`);
        assert.deepEqual(
          (report.skipped as { server: string }[]).map((s) => s.server),
          servers.filter((s) => !stdio.includes(s)),
        );
        const afterInstall = await listed(bin, repo.dir, home);
        for (const s of servers)
          if (stdio.includes(s))
            assert.ok(
              afterInstall.get(s)?.includes(`${TALLY_BIN} mcp --name ${s} -- /bin/true`),
              `${s}: ${afterInstall.get(s)}`,
            );
          else assert.equal(afterInstall.get(s), null, `${s} stays remote`);
      } finally {
        repo.cleanup();
        removeTempDir(home);
      }
    });
});
