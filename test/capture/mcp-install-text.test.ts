/**
 * `tally install codex --mcp` and `tally install opencode --mcp` edit the agent's file in place:
 * Codex's `.codex/config.toml` (TOML) and OpenCode's `opencode.jsonc` / `.opencode/opencode.json`
 * (JSON with comments). Only the command line of each stdio server changes — the expected text
 * is written out here, comments and spacing and every other table as they were — the rewritten
 * entry runs the real filesystem server behind the gateway, and uninstall puts back the same
 * bytes. A file that cannot be read is refused with its name, line and column, and nothing is
 * written. (That the pinned Codex and OpenCode read the rewritten files as intended is
 * test/agents/mcp-config-readers.test.ts.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, TALLY_BIN } from '../cli/tally-process.js';
import { assertGatewayDenies, certified, FS_SERVER } from './mcp-fixture.js';

const NODE = process.execPath;
const q = (s: string) => JSON.stringify(s);
const gateway = (name: string, ...argv: string[]) => [TALLY_BIN, 'mcp', '--name', name, '--', ...argv];

function write(root: string, file: string, text: string): string {
  const path = join(root, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const codexConfig = (root: string) => `# Codex, this project.
model = "o3"   # kept

[mcp_servers.fs]
# the files
command = ${q(NODE)} # the launcher
args = [
  ${q(FS_SERVER)},   # the server
  '${root}',
]
env = { FS_MODE = "plain" }
startup_timeout_sec = 20

[mcp_servers.bare]
  command = ${q(NODE)}
[mcp_servers.bare.env]
A = "1"

[mcp_servers.remote]
url = "https://mcp.example.test/mcp"

[mcp_servers]
inline = { command = "x" }
`;

const codexInstalled = (root: string) =>
  codexConfig(root)
    .replace(/args = \[\n[^\]]*\]/, `args = [${gateway('fs', NODE, FS_SERVER, root).map(q).join(', ')}]`)
    .replace(
      `  command = ${q(NODE)}\n`,
      `  command = ${q(NODE)}\n  args = [${gateway('bare', NODE).map(q).join(', ')}]\n`,
    );

describe('tally install codex --mcp', () => {
  it('edits the command lines of the [mcp_servers.*] tables in place, and uninstall puts back the bytes', async () => {
    const project = await certified('tally-mcp-install-codex-');
    const { root } = project;
    const path = write(root, '.codex/config.toml', codexConfig(root));
    const report = jsonOut(await project.tally(['install', 'codex', '--mcp', '--json']));
    assert.deepEqual(report.wrapped, ['fs', 'bare']);
    assert.deepEqual(
      (report.skipped as { server: string }[]).map((s) => s.server),
      ['remote', 'inline'],
    );
    assert.equal(readFileSync(path, 'utf8'), codexInstalled(root));
    assert.ok(existsSync(join(root, '.tally/mcp-servers-codex.json')), 'the originals are kept');
    assert.deepEqual(jsonOut(await project.tally(['install', 'codex', '--mcp', '--json'])).wrapped, []);
    await assertGatewayDenies(
      { command: NODE, args: gateway('fs', NODE, FS_SERVER, root) },
      root,
      project.env as Record<string, string>,
    );
    const removed = jsonOut(await project.tally(['uninstall', 'codex', '--mcp', '--json']));
    assert.deepEqual(removed.restored, ['fs', 'bare']);
    assert.equal(readFileSync(path, 'utf8'), codexConfig(root));
    assert.equal(existsSync(join(root, '.tally/mcp-servers-codex.json')), false, 'nothing left kept');
  });

  it('a table whose command line changed since is left as it is, its original kept', async () => {
    const project = makeProject('tally-mcp-install-codex-edited-');
    const { root } = project;
    assert.equal((await project.tally(['init'])).code, 0);
    const path = write(root, '.codex/config.toml', codexConfig(root));
    assert.equal((await project.tally(['install', 'codex', '--mcp'])).code, 0);
    const edited = readFileSync(path, 'utf8').replace('"--name", "fs"', '"--name", "files"');
    writeFileSync(path, edited);
    const first = jsonOut(await project.tally(['uninstall', 'codex', '--mcp', '--json']));
    assert.deepEqual([first.restored, first.kept], [['bare'], ['fs']]);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"--name", "files"', '"--name", "fs"'));
    const second = jsonOut(await project.tally(['uninstall', 'codex', '--mcp', '--json']));
    assert.deepEqual(second.restored, ['fs']);
    assert.equal(readFileSync(path, 'utf8'), codexConfig(root));
  });

  it('a CRLF file whose last line is a command gets its args line with CRLF, and back', async () => {
    const project = makeProject('tally-mcp-install-codex-crlf-');
    assert.equal((await project.tally(['init'])).code, 0);
    const text = `model = "o3"\r\n\r\n[mcp_servers.fs]\r\ncommand = ${q(NODE)}`;
    const path = write(project.root, '.codex/config.toml', text);
    assert.equal((await project.tally(['install', 'codex', '--mcp'])).code, 0);
    const args = `args = [${gateway('fs', NODE).map(q).join(', ')}]`;
    assert.equal(readFileSync(path, 'utf8'), `${text}\r\n${args}`);
    assert.equal((await project.tally(['uninstall', 'codex', '--mcp'])).code, 0);
    assert.equal(readFileSync(path, 'utf8'), text);
  });

  it('a file that is not TOML is refused with its line and column, and nothing is written', async () => {
    const project = makeProject('tally-mcp-install-codex-bad-');
    assert.equal((await project.tally(['init'])).code, 0);
    const text = `[mcp_servers.fs]\ncommand = ${q(NODE)}\nargs = ["a", "b\n`;
    const path = write(project.root, '.codex/config.toml', text);
    const ran = await project.tally(['install', 'codex', '--mcp']);
    assert.equal(ran.code, 2, ran.stderr);
    assert.match(ran.stderr, /config\.toml: line 3, column 14: unterminated string; nothing was changed/);
    assert.equal(readFileSync(path, 'utf8'), text);
    assert.equal(existsSync(join(project.root, '.tally/mcp-servers-codex.json')), false);
  });
});

const openCodeConfig = (root: string) => `{
  // OpenCode, this project.
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    /* the files */
    "fs": {
      "type": "local",
      "command": [
        ${q(NODE)},
        ${q(FS_SERVER)}, // the server
        ${q(root)},
      ],
      "environment": { "FS_MODE": "plain" },
      "enabled": true,
    },
    "remote": { "type": "remote", "url": "https://mcp.example.test/mcp" },
  },
}
`;

const openCodeServersMap = `{
  "mcp": {
    "servers": {
      "tools": { "type": "local", "command": ["node", "tools.js"] }
    }
  }
}
`;

describe('tally install opencode --mcp', () => {
  it('replaces the command arrays of opencode.jsonc and of .opencode/’s servers map, and back', async () => {
    const project = await certified('tally-mcp-install-opencode-');
    const { root } = project;
    const jsonc = write(root, 'opencode.jsonc', openCodeConfig(root));
    const map = write(root, '.opencode/opencode.json', openCodeServersMap);
    const report = jsonOut(await project.tally(['install', 'opencode', '--mcp', '--json']));
    assert.deepEqual(report.wrapped, ['fs', 'tools']);
    assert.deepEqual(
      (report.skipped as { server: string }[]).map((s) => s.server),
      ['remote'],
    );
    const fsArgv = [NODE, ...gateway('fs', NODE, FS_SERVER, root)];
    assert.equal(
      readFileSync(jsonc, 'utf8'),
      openCodeConfig(root).replace(/"command": \[\n[^\]]*\]/, `"command": [${fsArgv.map(q).join(', ')}]`),
    );
    assert.equal(
      readFileSync(map, 'utf8'),
      openCodeServersMap.replace(
        '["node", "tools.js"]',
        `[${[NODE, ...gateway('tools', 'node', 'tools.js')].map(q).join(', ')}]`,
      ),
    );
    const [command, ...args] = fsArgv as [string, ...string[]];
    await assertGatewayDenies({ command, args }, root, project.env as Record<string, string>);
    const removed = jsonOut(await project.tally(['uninstall', 'opencode', '--mcp', '--json']));
    assert.deepEqual(removed.restored, ['fs', 'tools']);
    assert.equal(readFileSync(jsonc, 'utf8'), openCodeConfig(root));
    assert.equal(readFileSync(map, 'utf8'), openCodeServersMap);
  });

  it('one file it cannot read stops the install before any file is written', async () => {
    const project = makeProject('tally-mcp-install-opencode-bad-');
    assert.equal((await project.tally(['init'])).code, 0);
    const good = `{ "mcp": { "fs": { "type": "local", "command": ["node", "fs.js"] } } }\n`;
    const bad = `{ "mcp": { "a": { "type": "local", "command": ["x"] }, "a": {} } }\n`;
    const goodPath = write(project.root, 'opencode.jsonc', good);
    const badPath = write(project.root, '.opencode/opencode.json', bad);
    const ran = await project.tally(['install', 'opencode', '--mcp']);
    assert.equal(ran.code, 2, ran.stderr);
    assert.match(
      ran.stderr,
      /opencode\.json: not JSON with comments \(line 1, column 56: the key "a" is given twice\); nothing was changed/,
    );
    assert.deepEqual([readFileSync(goodPath, 'utf8'), readFileSync(badPath, 'utf8')], [good, bad]);
    assert.equal(existsSync(join(project.root, '.tally/mcp-servers-opencode.json')), false);
  });
});
