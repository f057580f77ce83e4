/**
 * `tally install claude-code --mcp` puts the project's `.mcp.json` stdio servers behind the gateway
 * (the rewritten entry, run by the real SDK client, relays the real filesystem server and denies
 * what the certificate forbids), leaves other servers alone and says why, and `tally uninstall
 * claude-code --mcp` puts back exactly the entries that were there. Gemini CLI and Qwen Code keep
 * their servers in their project settings, beside their hooks: the same, the rest of the file kept.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, type Project } from '../cli/tally-process.js';
import { connect, FS_SERVER, resultText } from './mcp-fixture.js';

/** A project with a session open under a certificate allowing the fs server's tools, a folder forbidden. */
async function certified(prefix: string): Promise<Project> {
  const project = makeProject(prefix);
  mkdirSync(join(project.root, 'secret'));
  for (const args of [
    ['init'],
    ['agent', 'register', '--name', 'coder', '--allow', 'mcp__fs__*', '--forbid', 'Write(secret/**)'],
    ['session', 'start', '--agent', 'coder'],
  ]) {
    const ran = await project.tally(args);
    assert.equal(ran.code, 0, ran.stderr);
  }
  return project;
}

/** The entry as written runs the server through the gateway: the forbidden write is denied. */
async function assertGatewayDenies(
  entry: { command: string; args: string[] },
  root: string,
  env: Record<string, string>,
): Promise<void> {
  const tapped = await connect([entry.command, ...entry.args], { cwd: root, env });
  try {
    const denied = await tapped.client.callTool({
      name: 'write_file',
      arguments: { path: join(root, 'secret/x.txt'), content: 'no' },
    });
    assert.equal(denied.isError, true);
    assert.match(resultText(denied), /Write\(secret\/\*\*\)/);
  } finally {
    await tapped.close();
  }
}

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

  for (const [agent, file] of [
    ['gemini-cli', '.gemini/settings.json'],
    ['qwen-code', '.qwen/settings.json'],
  ] as const)
    it(`${agent}: the mcpServers of ${file}, beside its hooks, and back`, async () => {
      const project = await certified(`tally-mcp-install-${agent}-`);
      const { root } = project;
      const original = {
        hooks: { BeforeTool: [{ matcher: '', hooks: [{ type: 'command', command: 'true' }] }] },
        mcpServers: {
          fs: { command: process.execPath, args: [FS_SERVER, root], cwd: root, trust: false },
          remote: { httpUrl: 'https://mcp.example.test/mcp' },
        },
      };
      const path = join(root, file);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, `${JSON.stringify(original, null, 2)}\n`);
      const report = jsonOut(await project.tally(['install', agent, '--mcp', '--json']));
      assert.deepEqual([report.agent, report.wrapped], [agent, ['fs']]);
      assert.deepEqual(
        (report.skipped as { server: string }[]).map((x) => x.server),
        ['remote'],
      );
      const installed = JSON.parse(readFileSync(path, 'utf8')) as typeof original & {
        mcpServers: { fs: { command: string; args: string[]; cwd: string; trust: boolean } };
      };
      assert.deepEqual(installed.hooks, original.hooks);
      assert.deepEqual([installed.mcpServers.fs.cwd, installed.mcpServers.fs.trust], [root, false]);
      const entry = installed.mcpServers.fs;
      await assertGatewayDenies(entry, root, project.env as Record<string, string>);
      const removed = jsonOut(await project.tally(['uninstall', agent, '--mcp', '--json']));
      assert.deepEqual(removed.restored, ['fs']);
      assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), original);
    });

  it('an agent with no MCP file Tally rewrites is refused, naming those it rewrites', async () => {
    const project = makeProject('tally-mcp-install-codex-');
    assert.equal((await project.tally(['init'])).code, 0);
    const ran = await project.tally(['install', 'codex', '--mcp']);
    assert.equal(ran.code, 2, ran.stderr);
    assert.match(
      ran.stderr,
      /codex has no MCP configuration Tally rewrites; it does for claude-code, gemini-cli, qwen-code/,
    );
  });
});
