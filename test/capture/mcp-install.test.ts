/**
 * `tally install claude-code --mcp` puts the project's `.mcp.json` stdio servers behind the gateway
 * (the rewritten entry, run by the real SDK client, relays the real filesystem server and denies
 * what the certificate forbids), leaves other servers alone and says why, and `tally uninstall
 * claude-code --mcp` puts back exactly the entries that were there. Gemini CLI and Qwen Code keep
 * their servers in their project settings, beside their hooks, and Cursor in .cursor/mcp.json: the
 * same, the rest of the file kept.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { plain, readJsonc } from '../../src/capture/jsonc.js';
import { jsonOut, makeProject, TALLY_BIN } from '../cli/tally-process.js';
import { assertGatewayDenies, certified, FS_SERVER } from './mcp-fixture.js';

describe('tally install claude-code --mcp', () => {
  it('wraps stdio servers in the gateway and uninstall restores them', async () => {
    const project = await certified('tally-mcp-install-');
    const { root } = project;
    const original = {
      mcpServers: {
        fs: { command: process.execPath, args: [FS_SERVER, root], env: { FS_MODE: 'plain' } },
        remote: { type: 'http', url: 'https://mcp.example.test/mcp' },
        bad__name: { command: 'x' },
      },
      other: 'kept',
    };
    const path = join(root, '.mcp.json');
    writeFileSync(path, `${JSON.stringify(original, null, 2)}\n`);
    const report = jsonOut(await project.tally(['install', 'claude-code', '--mcp', '--json']));
    assert.deepEqual(report.wrapped, ['fs']);
    assert.deepEqual(
      (report.skipped as { server: string }[]).map((s) => s.server),
      ['remote', 'bad__name'],
    );
    const installed = JSON.parse(readFileSync(path, 'utf8')) as typeof original & {
      mcpServers: { fs: { command: string; args: string[]; env: Record<string, string> } };
    };
    assert.deepEqual(installed.mcpServers.remote, original.mcpServers.remote);
    assert.equal(installed.other, 'kept');
    assert.deepEqual(installed.mcpServers.fs.env, { FS_MODE: 'plain' });
    const again = jsonOut(await project.tally(['install', 'claude-code', '--mcp', '--json']));
    assert.deepEqual(again.wrapped, [], 'installing twice wraps nothing twice');

    // The entry as written runs the server through the gateway.
    const entry = installed.mcpServers.fs;
    await assertGatewayDenies(entry, root, { ...(project.env as Record<string, string>), ...entry.env });

    const removed = jsonOut(await project.tally(['uninstall', 'claude-code', '--mcp', '--json']));
    assert.deepEqual(removed.restored, ['fs']);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), original);
  });

  it('an entry edited after install is left as it is, and its original stays kept for a later uninstall', async () => {
    const project = makeProject('tally-mcp-install-edited-');
    const { root } = project;
    assert.equal((await project.tally(['init'])).code, 0);
    const original = {
      mcpServers: {
        a: { command: process.execPath, args: [FS_SERVER, root] },
        b: { command: process.execPath, args: [FS_SERVER, root, '--b'] },
      },
    };
    const path = join(root, '.mcp.json');
    writeFileSync(path, `${JSON.stringify(original, null, 2)}\n`);
    assert.deepEqual(jsonOut(await project.tally(['install', 'claude-code', '--mcp', '--json'])).wrapped, [
      'a',
      'b',
    ]);
    const installed = JSON.parse(readFileSync(path, 'utf8')) as {
      mcpServers: Record<string, { env?: Record<string, string> }>;
    };
    const wrappedB = JSON.parse(JSON.stringify(installed.mcpServers.b));
    installed.mcpServers.b!.env = { EDITED: '1' };
    writeFileSync(path, `${JSON.stringify(installed, null, 2)}\n`);
    const first = jsonOut(await project.tally(['uninstall', 'claude-code', '--mcp', '--json']));
    assert.deepEqual([first.restored, first.kept], [['a'], ['b']]);
    // The user undoes the edit; the next uninstall restores b from the kept original.
    const now = JSON.parse(readFileSync(path, 'utf8')) as { mcpServers: Record<string, unknown> };
    now.mcpServers.b = wrappedB;
    writeFileSync(path, `${JSON.stringify(now, null, 2)}\n`);
    const second = jsonOut(await project.tally(['uninstall', 'claude-code', '--mcp', '--json']));
    assert.deepEqual(second.restored, ['b']);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), original);
  });

  it('originals kept by an earlier Tally (one file’s, as `servers`) are restored', async () => {
    const project = makeProject('tally-mcp-install-kept-');
    const { root } = project;
    assert.equal((await project.tally(['init'])).code, 0);
    const original = { command: process.execPath, args: [FS_SERVER, root] };
    const wrapped = {
      command: process.execPath,
      args: [TALLY_BIN, 'mcp', '--name', 'fs', '--', process.execPath, FS_SERVER, root],
    };
    const path = join(root, '.mcp.json');
    writeFileSync(path, JSON.stringify({ mcpServers: { fs: wrapped } }));
    writeFileSync(join(root, '.tally/mcp-servers.json'), JSON.stringify({ servers: { fs: original } }));
    const removed = jsonOut(await project.tally(['uninstall', 'claude-code', '--mcp', '--json']));
    assert.deepEqual(removed.restored, ['fs']);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), { mcpServers: { fs: original } });
    assert.equal(existsSync(join(root, '.tally/mcp-servers.json')), false);
  });

  // Cursor's is its documented format (no Cursor CLI runs here): Claude Code's, a remote server by `url`.
  for (const [agent, file, remote] of [
    ['gemini-cli', '.gemini/settings.json', 'httpUrl'],
    ['qwen-code', '.qwen/settings.json', 'httpUrl'],
    ['cursor', '.cursor/mcp.json', 'url'],
  ] as const)
    it(`${agent}: the mcpServers of ${file}, the rest of the file kept, and back`, async () => {
      const project = await certified(`tally-mcp-install-${agent}-`);
      const { root } = project;
      const original = {
        hooks: { BeforeTool: [{ matcher: '', hooks: [{ type: 'command', command: 'true' }] }] },
        mcpServers: {
          fs: { command: process.execPath, args: [FS_SERVER, root], cwd: root, trust: false },
          remote: { [remote]: 'https://mcp.example.test/mcp' },
        },
      };
      const path = join(root, file);
      mkdirSync(join(path, '..'), { recursive: true });
      // Gemini CLI and Qwen Code read comments in their settings: the file is edited around them.
      const comment = agent === 'cursor' ? '' : '\t// mine\r\n';
      const text = `{\r\n${comment}${JSON.stringify(original, null, '\t').split('\n').slice(1).join('\r\n')}\r\n`;
      writeFileSync(path, text);
      const report = jsonOut(await project.tally(['install', agent, '--mcp', '--json']));
      assert.deepEqual([report.agent, report.wrapped], [agent, ['fs']]);
      assert.deepEqual(
        (report.skipped as { server: string }[]).map((x) => x.server),
        ['remote'],
      );
      const installed = plain(readJsonc(readFileSync(path, 'utf8'))) as typeof original & {
        mcpServers: { fs: { command: string; args: string[]; cwd: string; trust: boolean } };
      };
      assert.match(readFileSync(path, 'utf8'), new RegExp(`^\\{\\r\\n${comment}\\t"hooks"`));
      assert.deepEqual(installed.hooks, original.hooks);
      assert.deepEqual([installed.mcpServers.fs.cwd, installed.mcpServers.fs.trust], [root, false]);
      const entry = installed.mcpServers.fs;
      await assertGatewayDenies(entry, root, project.env as Record<string, string>);
      const removed = jsonOut(await project.tally(['uninstall', agent, '--mcp', '--json']));
      assert.deepEqual(removed.restored, ['fs']);
      assert.equal(readFileSync(path, 'utf8'), text, 'the file comes back byte for byte');
    });

  it('an entry the agent would not start by its command is named and left alone', async () => {
    const project = makeProject('tally-mcp-install-transport-');
    assert.equal((await project.tally(['init'])).code, 0);
    const url = 'https://mcp.example.test/mcp';
    const cases = [
      // Cursor's documentation does not say which of command and url it uses when both are given.
      ['cursor', '.cursor/mcp.json', { command: 'x', url }, /does not say whether it runs command/],
      // Qwen Code's type sdk is its SDK's own in-process server.
      ['qwen-code', '.qwen/settings.json', { command: 'x', type: 'sdk' }, /SDK server/],
      ['gemini-cli', '.gemini/settings.json', { command: 'x', url }, /Gemini CLI dials url/],
    ] as const;
    for (const [agent, file, entry, reason] of cases) {
      const path = join(project.root, file);
      mkdirSync(join(path, '..'), { recursive: true });
      const text = JSON.stringify({ mcpServers: { fs: entry } });
      writeFileSync(path, text);
      const report = jsonOut(await project.tally(['install', agent, '--mcp', '--json']));
      assert.deepEqual(report.wrapped, [], agent);
      const skipped = report.skipped as { server: string; reason: string }[];
      assert.equal(skipped[0]?.server, 'fs');
      assert.match(skipped[0]!.reason, reason);
      assert.equal(readFileSync(path, 'utf8'), text);
    }
  });

  it('a project without the agent’s MCP file is refused, naming the file, and nothing is written', async () => {
    const project = makeProject('tally-mcp-install-none-');
    assert.equal((await project.tally(['init'])).code, 0);
    const ran = await project.tally(['install', 'cursor', '--mcp']);
    assert.equal(ran.code, 2, ran.stderr);
    assert.match(ran.stderr, /\.cursor\/mcp\.json: no MCP servers to put behind the gateway/);
    assert.equal(existsSync(join(project.root, '.tally/mcp-servers-cursor.json')), false);
  });
});
