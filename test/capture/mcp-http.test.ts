/**
 * `tally mcp --http URL` in front of the real server-everything speaking streamable HTTP, driven by
 * the real SDK client over HTTP: answers (a JSON result, a progress stream) are the ones the same
 * calls get directly, a call the certificate forbids is answered with isError and the server never
 * runs it, and the sealed package verifies with the calls in it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  certifiedProject,
  type HttpGateway,
  resultText,
  startEverythingHttp,
  startHttpGateway,
} from './mcp-fixture.js';

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
    const project = await certifiedProject('tally-mcp-http-', 'everything', 'get-sum');
    const { server, url: remote } = await startEverythingHttp(project);
    let gateway: HttpGateway | undefined;
    try {
      const direct = await session(remote);
      gateway = await startHttpGateway(project, remote, 'everything');
      const through = await session(gateway.url);
      assert.deepEqual(through.echo, direct.echo);
      assert.deepEqual(through.long, direct.long);
      assert.equal(direct.sum.isError, undefined);
      assert.equal(through.sum.isError, true);
      assert.match(resultText(through.sum), /mcp__everything__get-sum/);
      const exited = new Promise((r) => gateway!.child.once('exit', r));
      gateway.child.kill('SIGTERM');
      await exited;
      const sealed = /sealed: (\S+\.tally)/.exec(gateway.stderr());
      assert.ok(sealed, gateway.stderr());
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
      gateway?.child.kill('SIGKILL');
      server.kill('SIGKILL');
    }
  });
});
