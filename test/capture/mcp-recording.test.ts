/**
 * What the MCP gateway records, and where: with the recorder holding the project's session, every
 * call goes through the recorder (source `mcp`); each allowed call has its `tool.before` and a
 * `tool.after` whose result digest is the digest of the result the client received (computed here
 * from the client's copy), a secret in the arguments never reaches the package, a cancelled call
 * is recorded cancelled, and the `tools/list` answer is pinned by the names the client saw. The
 * gateway itself never loads the MCP SDK; a server that cannot start is a clear error.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RecorderClient } from '../../src/recorder/client.js';
import { packageRecords } from '../agents/tally-flow.js';
import { decodedPayloads, makeProject } from '../cli/tally-process.js';
import { connect, EVERYTHING_SERVER, resultText, sortedJson, throughGateway } from './mcp-fixture.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('tally mcp: the record', () => {
  it('records through the recorder that holds the session: calls, result digests, cancellation, tools', async () => {
    const project = makeProject('tally-mcp-rec-');
    for (const args of [
      ['init'],
      ['agent', 'register', '--name', 'coder', '--allow', 'mcp__everything__*'],
    ]) {
      const ran = await project.tally(args);
      assert.equal(ran.code, 0, ran.stderr);
    }
    const env = { ...project.env, TALLY_RECORDER_IDLE_MS: '60000' } as Record<string, string>;
    const recorder = await RecorderClient.of(project.home, env);
    await recorder.ensure({ env });
    try {
      const started = await recorder.request('POST', '/sessions', { cwd: project.root, agent: 'coder' });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const session = (started.body as { session: string }).session;
      const tapped = await connect(
        throughGateway('everything', [process.execPath, EVERYTHING_SERVER, 'stdio']),
        {
          cwd: project.root,
          env,
        },
      );
      let listed: string[];
      let echoed: unknown;
      try {
        listed = (await tapped.client.listTools()).tools.map((t) => t.name);
        echoed = await tapped.client.callTool({
          name: 'echo',
          arguments: { message: 'deploy with API_KEY=sk-live-0123456789abcdef' },
        });
        assert.match(resultText(echoed), /sk-live-0123456789abcdef/, 'the server answered the call as sent');
        const abort = new AbortController();
        const cancelled = tapped.client
          .callTool(
            { name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } },
            undefined,
            {
              signal: abort.signal,
              onprogress: () => abort.abort(),
            },
          )
          .then(
            () => 'answered',
            () => 'cancelled',
          );
        assert.equal(await cancelled, 'cancelled');
      } finally {
        await tapped.close();
      }
      const closed = await recorder.request('POST', '/sessions/close', { session });
      assert.equal(closed.status, 200, JSON.stringify(closed.body));
      const pkg = (closed.body as { package: string }).package;
      const bytes = readFileSync(pkg);
      assert.doesNotMatch(
        decodedPayloads(bytes),
        /sk-live-0123456789abcdef/,
        'the secret is not in the package',
      );

      const recs = packageRecords(pkg);
      const mcp = recs.filter((r) => r.source === 'mcp');
      const events = mcp.map((r) => r.event as Record<string, unknown>);
      const tools = events.find((e) => e.type === 'dev.tally.mcp.tools')!;
      assert.deepEqual(
        (tools.extensions as Record<string, { tools: string[] }>)['dev.tally.mcp']!.tools,
        listed,
      );
      const calls = (type: string) =>
        events.filter((e) => e.type === type).map((e) => ({ name: (e.tool as { name: string }).name, e }));
      assert.deepEqual(
        calls('tool.before').map((c) => c.name),
        ['mcp__everything__echo', 'mcp__everything__trigger-long-running-operation'],
      );
      const echoBefore = calls('tool.before')[0]!.e;
      assert.match(JSON.stringify((echoBefore.tool as { input: unknown }).input), /API_KEY=\[REDACTED\]/);
      const afters = calls('tool.after');
      const echoAfter = afters.find((c) => c.name === 'mcp__everything__echo')!.e;
      assert.equal(echoAfter.outcome, 'ok');
      const facts = (echoAfter.extensions as Record<string, Record<string, unknown>>)['dev.tally.mcp']!;
      const oracle = `sha256:${createHash('sha256').update(sortedJson(echoed)).digest('hex')}`;
      assert.equal(facts.result_digest, oracle);
      assert.equal(facts.is_error, false);
      const longAfter = afters.find((c) => c.name === 'mcp__everything__trigger-long-running-operation')!.e;
      assert.equal(longAfter.outcome, 'cancelled');
      // Both records of a call share its id; the decision came from the certificate.
      assert.equal((echoBefore.call as { id: string }).id, (echoAfter.call as { id: string }).id);
      const decided = mcp.find((r) => (r.event as { type: string }).type === 'tool.before')!;
      assert.equal((decided.decision as { by: string }).by, 'dev.tally.certificate');
      const verify = await project.tally(['verify', pkg, '--certificate', 'coder', '--json']);
      assert.equal(verify.code, 0, verify.stdout);
    } finally {
      await recorder.stop();
    }
  });

  it('never loads the MCP SDK: no source file imports it', () => {
    const importing = sources('src').filter((f) => readFileSync(f, 'utf8').includes('@modelcontextprotocol'));
    assert.deepEqual(importing, []);
  });

  it('says which server could not be started, and exits 2', async () => {
    const project = makeProject('tally-mcp-bad-');
    assert.equal((await project.tally(['init'])).code, 0);
    const ran = await project.tally(['mcp', '--name', 'nope', '--', 'no-such-mcp-server-binary']);
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /the MCP server 'no-such-mcp-server-binary' could not be started: ENOENT/);
    assert.equal(ran.stdout, '', 'nothing but relayed bytes goes to stdout');
    const usage = await project.tally(['mcp', '--name', 'a__b', '--', 'x']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--name/);
  });
});
