/**
 * `tally install claude-code --mcp` puts the project's `.mcp.json` stdio servers behind the gateway
 * (the rewritten entry, run by the real SDK client, relays the real filesystem server and denies
 * what the certificate forbids), leaves other servers alone and says why, and `tally uninstall
 * claude-code --mcp` puts back exactly the entries that were there.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { connect, FS_SERVER, resultText } from './mcp-fixture.js';

describe('tally install claude-code --mcp', () => {
  it('wraps stdio servers in the gateway and uninstall restores them', async () => {
    const project = makeProject('tally-mcp-install-');
    const { root } = project;
    mkdirSync(join(root, 'secret'));
    for (const args of [
      ['init'],
      ['agent', 'register', '--name', 'coder', '--allow', 'mcp__fs__*', '--forbid', 'Write(secret/**)'],
      ['session', 'start', '--agent', 'coder'],
    ]) {
      const ran = await project.tally(args);
      assert.equal(ran.code, 0, ran.stderr);
    }
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
    const tapped = await connect([entry.command, ...entry.args], {
      cwd: root,
      env: { ...(project.env as Record<string, string>), ...entry.env },
    });
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

    const removed = jsonOut(await project.tally(['uninstall', 'claude-code', '--mcp', '--json']));
    assert.deepEqual(removed.restored, ['fs']);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), original);
  });
});
