/**
 * The MCP gateway in front of the real filesystem server, driven by the real SDK client: the
 * certificate's forbids stop a write into secret/ and a read of .env before the server sees them
 * (the server's own stdin, copied by `tee`, is the oracle), an allowed write lands on disk, and the
 * sealed package verifies with the write and the read in its receipt, witnessed by `mcp`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { certify, connect, FS_SERVER, resultText, throughGateway } from './mcp-fixture.js';

describe('tally mcp in front of @modelcontextprotocol/server-filesystem', () => {
  it('denies forbidden calls before the server sees them, lets allowed ones through, and records them', async () => {
    const project = makeProject('tally-mcp-fs-');
    const { root } = project;
    mkdirSync(join(root, 'secret'));
    writeFileSync(join(root, '.env'), 'TOKEN=hunter2-not-for-models\n');
    await certify(project, [
      '--allow',
      'mcp__fs__*',
      '--forbid',
      'Write(secret/**)',
      '--forbid',
      'Read(.env)',
    ]);
    const seen = join(project.dir, 'server-stdin.log');
    // The server's stdin is copied by tee before the server reads it: what the server received.
    const server = ['sh', '-c', `tee "${seen}" | exec "${process.execPath}" "${FS_SERVER}" "${root}"`];
    const env = project.env as Record<string, string>;
    const tapped = await connect(throughGateway('fs', server, ['--agent', 'coder']), { cwd: root, env });
    let closed = false;
    try {
      const { tools } = await tapped.client.listTools();
      assert.ok(tools.some((t) => t.name === 'write_file'));

      const allowed = await tapped.client.callTool({
        name: 'write_file',
        arguments: { path: join(root, 'notes.txt'), content: 'written through mcp\n' },
      });
      assert.notEqual(allowed.isError, true, resultText(allowed));
      assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'written through mcp\n');

      const forbidden = await tapped.client.callTool({
        name: 'write_file',
        arguments: { path: join(root, 'secret/key.txt'), content: 'leak\n' },
      });
      assert.equal(forbidden.isError, true);
      assert.match(resultText(forbidden), /Write\(secret\/\*\*\)/);
      assert.equal(existsSync(join(root, 'secret/key.txt')), false, 'the forbidden write did not happen');

      const env = await tapped.client.callTool({ name: 'read_text_file', arguments: { path: '.env' } });
      assert.equal(env.isError, true);
      assert.match(resultText(env), /Read\(\.env\)/);
      assert.doesNotMatch(JSON.stringify(env), /hunter2/);

      const readme = await tapped.client.callTool({
        name: 'read_text_file',
        arguments: { path: join(root, 'README.md') },
      });
      assert.equal(resultText(readme), '# project\n');

      await tapped.close();
      closed = true;
      const received = readFileSync(seen, 'utf8');
      assert.match(received, /notes\.txt/, 'the allowed call reached the server');
      assert.doesNotMatch(received, /secret/, 'the server never received the forbidden write');
      assert.doesNotMatch(received, /\.env/, 'the server never received the forbidden read');

      const sealed = /sealed: (\S+\.tally)/.exec(tapped.stderr());
      assert.ok(sealed, tapped.stderr());
      const pkg = sealed[1]!;
      const verify = await project.tally(['verify', pkg, '--certificate', 'coder', '--json']);
      assert.equal(verify.code, 0, verify.stdout);
      const receipt = jsonOut(await project.tally(['receipt', 'show', pkg, '--json']));
      const written = (receipt.files_written as { path: string; sources: string[] }[]).find(
        (f) => f.path === 'notes.txt',
      );
      // Seen by the gateway, and corroborated by the reconciliation of the tree at close.
      assert.deepEqual(written?.sources, ['git-reconcile', 'mcp'], JSON.stringify(receipt.files_written));
      assert.equal(
        (receipt.files_written as { path: string }[]).some((f) => f.path.startsWith('secret')),
        false,
      );
      const read = (receipt.files_read as { path: string; sources: string[] }[]).find(
        (f) => f.path === 'README.md',
      );
      assert.deepEqual(read?.sources, ['mcp'], JSON.stringify(receipt.files_read));
      const decisions = receipt.decisions as { decision: string; rule?: string; tool?: string }[];
      assert.deepEqual(
        decisions.filter((d) => d.decision === 'deny').map((d) => [d.tool, d.rule]),
        [
          ['mcp__fs__write_file', 'Write(secret/**)'],
          ['mcp__fs__read_text_file', 'Read(.env)'],
        ],
      );
    } finally {
      if (!closed) await tapped.close().catch(() => undefined);
    }
  });
});
