/**
 * Tally talks to `codex app-server` to trust its hooks, to ask which MCP servers Codex runs, and to
 * wire `tally run -- codex`. A program that is not there, exits at once, or stops reading its input
 * ends that conversation with a clear error — never an unhandled EPIPE — and `tally install` still
 * says what it wrote. Oracles: `/bin/false` (exits 1 at once), a missing path (ENOENT), a script
 * that reads its input, complains on stderr and exits.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { withAppServer } from '../../src/capture/codex/trust.js';
import { jsonOut, makeProject } from './tally-process.js';

const GONE = /app-server (exited \(code 1\) before it answered|stopped reading its input \(EPIPE\))/;

describe('a codex app-server that is gone or deaf', () => {
  it('install codex --mcp writes the file, says so, and says Codex could not be asked', async () => {
    const project = makeProject('tally-codex-gone-mcp-');
    assert.equal((await project.tally(['init'])).code, 0);
    mkdirSync(join(project.root, '.codex'));
    const path = join(project.root, '.codex', 'config.toml');
    writeFileSync(path, '[mcp_servers.fs]\ncommand = "npx"\n');
    const ran = await project.tally(['install', 'codex', '--mcp', '--agent-bin', '/bin/false', '--json']);
    assert.equal(ran.code, 0, ran.stderr);
    const report = jsonOut(ran);
    assert.deepEqual(report.wrapped, ['fs']);
    const codex = report.codex as { checked: boolean; reason: string };
    assert.equal(codex.checked, false);
    assert.match(codex.reason, GONE);
    assert.match(readFileSync(path, 'utf8'), /"mcp", "--name", "fs"/);
    const human = await project.tally(['uninstall', 'codex', '--mcp']);
    assert.equal(human.code, 0, human.stderr);
    const again = await project.tally(['install', 'codex', '--mcp', '--agent-bin', '/bin/false']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /put 1 MCP server\(s\) behind the gateway in .*config\.toml: fs/);
    assert.match(again.stderr, /could not ask Codex which servers it runs: .*before it answered/);
  });

  it('install codex writes the hooks, says they are untrusted and why, and exits 1', async () => {
    const project = makeProject('tally-codex-gone-hooks-');
    assert.equal((await project.tally(['init'])).code, 0);
    for (const bin of ['/bin/false', join(project.dir, 'no-such-codex')]) {
      const ran = await project.tally(['install', 'codex', '--agent-bin', bin]);
      assert.equal(ran.code, 1, ran.stderr);
      assert.match(ran.stderr, /wrote \d+ Codex hooks \(command\) to .*hooks\.json/);
      assert.match(
        ran.stderr,
        bin === '/bin/false'
          ? /could not have Codex trust the hooks written: \/bin\/false app-server/
          : /could not have Codex trust the hooks written: cannot start .*no-such-codex app-server: ENOENT/,
      );
      assert.ok(existsSync(join(project.dir, '.codex', 'hooks.json')));
    }
  });

  it('tally run -- <a codex that cannot trust its hooks>: the agent is not started and the session is closed, not left held', async () => {
    const project = makeProject('tally-codex-gone-run-');
    project.env.TALLY_RECORDER_IDLE_MS = '5000';
    assert.equal((await project.tally(['init'])).code, 0);
    try {
      const ran = await project.tally(['run', '--harness', 'codex', '--', '/bin/false']);
      assert.notEqual(ran.code, 0);
      assert.match(ran.stderr, /hooks could not be wired, so it was not started; session ses_\S+ was closed/);
      const status = jsonOut(await project.tally(['recorder', 'status', '--json'])) as {
        sessions: unknown[];
      };
      assert.deepEqual(status.sessions, [], 'no session is left held');
      const again = await project.tally(['session', 'status', '--json']);
      assert.doesNotMatch(again.stdout, /"state":\s*"open"/, 'no session is left open in the project');
    } finally {
      await project.tally(['recorder', 'stop']);
    }
  });

  it('a program that reads its input, complains and exits: the complaint is in the reason', async () => {
    const project = makeProject('tally-codex-complains-');
    const old = join(project.dir, 'old-codex');
    writeFileSync(
      old,
      '#!/bin/sh\nread -r line\necho "error: unrecognized subcommand app-server" >&2\nexit 2\n',
    );
    chmodSync(old, 0o755);
    await assert.rejects(
      withAppServer(old, { PATH: process.env.PATH ?? '' }, project.dir, async () => 'answered'),
      /old-codex app-server (exited \(code 2\)|stopped reading its input \(EPIPE\)) before it answered: error: unrecognized subcommand app-server/,
    );
  });
});
