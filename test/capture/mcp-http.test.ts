/**
 * `tally mcp --http URL` in front of the real server-everything speaking streamable HTTP, driven by
 * the real SDK client over HTTP: answers (a JSON result, a progress stream) are the ones the same
 * calls get directly, a call the certificate forbids is answered with isError and the server never
 * runs it, and the sealed package verifies with the calls in it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makeProject, TALLY_BIN } from '../cli/tally-process.js';
import { EVERYTHING_SERVER, resultText } from './mcp-fixture.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves with the first stream line matching `pattern`. */
function waitFor(child: ChildProcess, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child[stream]!.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      const m = pattern.exec(text);
      if (m) resolve(m[0]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${pattern}: ${text}`)));
  });
}

async function session(url: string) {
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const progress: number[] = [];
  const echo = await client.callTool({ name: 'echo', arguments: { message: 'over http' } });
  const long = await client.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  const sum = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
  await client.close();
  return { echo, long, sum };
}

describe('tally mcp --http', () => {
  it('relays streamable HTTP, denies a forbidden call, and records the session', async () => {
    const project = makeProject('tally-mcp-http-');
    for (const args of [
      ['init'],
      [
        'agent',
        'register',
        '--name',
        'coder',
        '--allow',
        'mcp__everything__*',
        '--forbid',
        'mcp__everything__get-sum',
      ],
    ]) {
      const ran = await project.tally(args);
      assert.equal(ran.code, 0, ran.stderr);
    }
    const port = await freePort();
    const server = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
      env: { ...project.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let gateway: ChildProcess | undefined;
    try {
      await waitFor(server, 'stderr', /listening on port \d+/);
      const remote = `http://127.0.0.1:${port}/mcp`;
      const direct = await session(remote);
      gateway = spawn(
        process.execPath,
        [TALLY_BIN, 'mcp', '--http', remote, '--name', 'everything', '--agent', 'coder'],
        {
          cwd: project.root,
          env: project.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let err = '';
      gateway.stderr!.on('data', (d: Buffer) => {
        err += d.toString('utf8');
      });
      const local = await waitFor(gateway, 'stdout', /http:\/\/127\.0\.0\.1:\d+\/mcp/);
      const through = await session(local);
      assert.deepEqual(through.echo, direct.echo);
      assert.deepEqual(through.long, direct.long);
      assert.equal(direct.sum.isError, undefined);
      assert.equal(through.sum.isError, true);
      assert.match(resultText(through.sum), /mcp__everything__get-sum/);
      const exited = new Promise((r) => gateway!.once('exit', r));
      gateway.kill('SIGTERM');
      await exited;
      const sealed = /sealed: (\S+\.tally)/.exec(err);
      assert.ok(sealed, err);
      const verify = await project.tally(['verify', sealed[1]!, '--certificate', 'coder', '--json']);
      assert.equal(verify.code, 0, verify.stdout);
      const receipt = await project.tally(['receipt', 'show', sealed[1]!, '--json']);
      const decisions = (JSON.parse(receipt.stdout) as { decisions: { decision: string; tool?: string }[] })
        .decisions;
      assert.deepEqual(
        decisions.map((d) => [d.tool, d.decision]),
        [
          ['mcp__everything__echo', 'allow'],
          ['mcp__everything__trigger-long-running-operation', 'allow'],
          ['mcp__everything__get-sum', 'deny'],
        ],
      );
    } finally {
      gateway?.kill('SIGKILL');
      server.kill('SIGKILL');
    }
  });
});
