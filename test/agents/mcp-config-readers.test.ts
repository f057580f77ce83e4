/**
 * The files `tally install codex|opencode --mcp` rewrite, read by the pinned agents themselves:
 * Codex's own parse of the project's `.codex/config.toml` (its app-server's `config/read`) and
 * OpenCode's resolved configuration (`opencode debug config`), before and after the install. Each
 * server put behind the gateway reads as the gateway in front of its old command line, with every
 * other key of it as before; every other server and every other setting reads as before — through
 * files that hold what a reader could mistake for a server table (in a comment, in a multi-line
 * string), CRLF line ends, escapes and literal strings. Uninstall gives back the same bytes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonOut, runTally, TALLY_BIN } from '../cli/tally-process.js';
import { ensureAgent } from './install.js';
import { codexProjectLayers } from './profiles/codex-trust.js';
import { makeRepo, type Repo } from './repo.js';
import { leftovers, makeTempDir, removeTempDir } from './temp.js';

const NODE = process.execPath;
const gateway = (name: string, argv: unknown[]) => [TALLY_BIN, 'mcp', '--name', name, '--', ...argv];

/** Two git work trees holding `file` with `text`: one left as it is, one `tally install <agent> --mcp`ed. */
async function beforeAndAfter(
  agent: string,
  file: string,
  text: string,
  home: string,
): Promise<{ repos: Repo[]; wrapped: unknown; uninstall: () => Promise<string> }> {
  const repos = [makeRepo({ files: {} }), makeRepo({ files: {} })];
  for (const repo of repos) {
    mkdirSync(dirname(join(repo.dir, file)), { recursive: true });
    writeFileSync(join(repo.dir, file), text);
  }
  const env = { PATH: process.env.PATH ?? '', HOME: home, TALLY_HOME: join(home, 'tally') };
  const dir = repos[1]!.dir;
  assert.equal((await runTally(['init'], { cwd: dir, env })).code, 0);
  const installed = jsonOut(await runTally(['install', agent, '--mcp', '--json'], { cwd: dir, env }));
  return {
    repos,
    wrapped: installed.wrapped,
    uninstall: async () => {
      assert.equal((await runTally(['uninstall', agent, '--mcp'], { cwd: dir, env })).code, 0);
      return readFileSync(join(dir, file), 'utf8');
    },
  };
}

/** The servers of `before` put behind the gateway where named, the rest as they were. */
function expected(
  before: Record<string, Record<string, unknown>>,
  wrapped: string[],
  rewrite: (name: string, entry: Record<string, unknown>) => Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(before).map(([name, entry]) => [
      name,
      wrapped.includes(name) ? rewrite(name, entry) : entry,
    ]),
  );
}

const CODEX_CONFIG = [
  '# [mcp_servers.in_a_comment]',
  'model = "o3"',
  'notes = """',
  '[mcp_servers.in_a_string]',
  'command = "not a server" \\',
  '  """',
  '',
  '[mcp_servers.fs]   # the files',
  `command = '${NODE}'`,
  'args = [',
  '  "server.js",   # first',
  '  "caf\\u00e9\\n \\"quoted\\"",',
  "  'C:\\literal',",
  ']',
  'env = { A = "1" }',
  '',
  '[mcp_servers.crlf]\r',
  'command = "uvx"\r',
  'startup_timeout_sec = 20\r',
  '[mcp_servers.crlf.env]\r',
  'X = "y"\r',
  '',
  '[mcp_servers.remote]',
  'url = "https://mcp.example.test/mcp"',
  '',
  '[features]',
  'apps = false',
].join('\n');

describe('the rewritten MCP files, read by the pinned agents', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('Codex reads each [mcp_servers.*] table Tally rewrote as the gateway in front of it, and the rest as before', async () => {
    const codex = await ensureAgent('codex');
    const home = makeTempDir('tally-home');
    mkdirSync(join(home, '.codex'));
    const config = CODEX_CONFIG;
    const { repos, wrapped, uninstall } = await beforeAndAfter('codex', '.codex/config.toml', config, home);
    try {
      assert.deepEqual(wrapped, ['fs', 'crlf']);
      const env = { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: join(home, '.codex') };
      const [before, now] = await codexProjectLayers(codex.bin, [repos[0]!.dir, repos[1]!.dir], env);
      const servers = before!.config.mcp_servers as Record<string, Record<string, unknown>>;
      assert.deepEqual(
        Object.keys(servers).sort(),
        ['crlf', 'fs', 'remote'],
        'no server from a comment or a string',
      );
      assert.deepEqual(now!.config, {
        ...before!.config,
        mcp_servers: expected(servers, ['fs', 'crlf'], (name, entry) => ({
          ...entry,
          command: NODE,
          args: gateway(name, [entry.command, ...((entry.args as unknown[]) ?? [])]),
        })),
      });
      assert.equal(await uninstall(), config);
    } finally {
      for (const repo of repos) repo.cleanup();
      removeTempDir(home);
    }
  });

  it('tally install codex --mcp asks Codex whether it loads the file and which servers it runs outside the gateway', async () => {
    const codex = await ensureAgent('codex');
    const repo = makeRepo({ files: {} });
    const home = makeTempDir('tally-home');
    try {
      const user = join(home, '.codex', 'config.toml');
      mkdirSync(dirname(user));
      writeFileSync(user, '[mcp_servers.userfs]\ncommand = "node"\nargs = ["user.js"]\n');
      mkdirSync(join(repo.dir, '.codex'));
      writeFileSync(
        join(repo.dir, '.codex/config.toml'),
        '[mcp_servers.fs]\ncommand = "node"\nargs = ["fs.js"]\n',
      );
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        TALLY_HOME: join(home, 'tally'),
        CODEX_HOME: dirname(user),
      };
      assert.equal((await runTally(['init'], { cwd: repo.dir, env })).code, 0);
      const install = async () =>
        jsonOut(
          await runTally(['install', 'codex', '--mcp', '--agent-bin', codex.bin, '--json'], {
            cwd: repo.dir,
            env,
          }),
        ).codex as Record<string, unknown>;
      const untrusted = await install();
      assert.deepEqual([untrusted.project_config, untrusted.not_behind_gateway], ['skipped', ['userfs']]);
      assert.match(String(untrusted.skipped_because), /trusted project/);
      writeFileSync(
        user,
        `${readFileSync(user, 'utf8')}[projects.${JSON.stringify(repo.dir)}]\ntrust_level = "trusted"\n`,
      );
      const trusted = await install();
      assert.deepEqual(trusted, { checked: true, project_config: 'loaded', not_behind_gateway: ['userfs'] });
    } finally {
      repo.cleanup();
      removeTempDir(home);
    }
  });

  it('OpenCode reads each local server Tally rewrote as the gateway in front of it, and the rest as before', async () => {
    const opencode = await ensureAgent('opencode');
    const home = makeTempDir('tally-home');
    const config = [
      '{',
      '  "$schema": "https://opencode.ai/config.json", // OpenCode writes it when it is missing',
      '  /* "mcp": { "in_a_comment": {} } */',
      '  "instructions": ["// not a comment", "/* nor this */"],',
      '  "mcp": {',
      '    "fs": {',
      '      "type": "local",',
      `      "command": [${JSON.stringify(NODE)}, "server.js", "caf\\u00e9"], // trailing`,
      '      "environment": { "A": "1" },',
      '    },',
      '    "off": { "type": "local", "command": ["uvx", "x"], "enabled": false },',
      '    "remote": { "type": "remote", "url": "https://mcp.example.test/mcp" },',
      '    "servers": { "mapped": { "type": "local", "command": ["node", "m.js"] } },',
      '  },',
      '}',
      '',
    ].join('\n');
    const { repos, wrapped, uninstall } = await beforeAndAfter('opencode', 'opencode.jsonc', config, home);
    try {
      assert.deepEqual(wrapped, ['fs', 'off', 'mapped']);
      // One after the other: two at once race to create OpenCode's database in the same home.
      const before = await openCodeConfig(opencode.bin, repos[0]!.dir, home);
      const now = await openCodeConfig(opencode.bin, repos[1]!.dir, home);
      const servers = before.mcp as Record<string, Record<string, unknown>>;
      assert.deepEqual(Object.keys(servers).sort(), ['fs', 'mapped', 'off', 'remote']);
      assert.deepEqual(now, {
        ...before,
        mcp: expected(servers, ['fs', 'off', 'mapped'], (name, entry) => ({
          ...entry,
          command: [NODE, ...gateway(name, entry.command as unknown[])],
        })),
      });
      assert.equal(await uninstall(), config);
    } finally {
      for (const repo of repos) repo.cleanup();
      removeTempDir(home);
    }
  });
});

/** `opencode debug config` in `dir`: the configuration OpenCode resolved, offline. */
async function openCodeConfig(bin: string, dir: string, home: string): Promise<Record<string, unknown>> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_STATE_HOME: join(home, '.local/state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    // Nothing leaves the machine: a proxy that is not there.
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
  };
  const child = spawn(bin, ['debug', 'config'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, err);
  return JSON.parse(out.slice(out.indexOf('{'))) as Record<string, unknown>;
}
