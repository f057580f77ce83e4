/**
 * The relay's protocol logic with no processes: in-memory pipes on both sides and the real
 * boundary (a real certificate over a memory store, its judge slowed to hold calls in flight).
 * Oracles: the JSON-RPC and MCP rules — nothing overtakes a call being judged (a cancellation
 * reaches the server after the request it cancels), a batch keeps what may pass, a call the server
 * never answered is recorded as not finished — and the bytes: every line reaches the other side as
 * written, in one write, and a line from which any parser could read a call is read first.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { McpRelay } from '../../src/capture/mcp/relay.js';
import { boundarySink } from '../../src/capture/mcp/sink.js';
import { certificateFor, openFixture } from '../boundary/fixture.js';

const server = { name: 'fs', command: 'mcp-server', args: [], cwd: '/repo' };

/** Lines written to a pipe, as they arrive. */
function lines(stream: PassThrough): string[] {
  const out: string[] = [];
  let rest = '';
  stream.on('data', (d: Buffer) => {
    const parts = (rest + d.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    out.push(...parts);
  });
  return out;
}

/** The chunks written to a pipe, each as one string. */
function writes(stream: PassThrough): string[] {
  const out: string[] = [];
  stream.on('data', (d: Buffer) => out.push(d.toString('latin1')));
  return out;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'the condition never held');
}

async function relayWith(slowMs: number, maxLineBytes?: number) {
  const slow = (handler: (m: never, s: AbortSignal) => unknown) => (message: never, signal: AbortSignal) =>
    new Promise((resolve) => setTimeout(() => resolve(handler(message, signal)), slowMs));
  const f = await openFixture(
    certificateFor({ allow: ['mcp__fs__*'], forbid: ['Write(secret/**)'] }),
    null,
    slowMs > 0 ? { wrapJudge: slow as never } : {},
  );
  const pipes = {
    clientIn: new PassThrough(),
    clientOut: new PassThrough(),
    serverIn: new PassThrough(),
    serverOut: new PassThrough(),
  };
  const relay = new McpRelay({
    server,
    harnessSession: 'mcp-test',
    sink: boundarySink(f.boundary, { source: 'mcp' }),
    ...pipes,
    afterDelayMs: 1,
    ...(maxLineBytes ? { maxLineBytes } : {}),
  });
  relay.start();
  return {
    f,
    relay,
    ...pipes,
    toServer: lines(pipes.serverIn),
    toClient: lines(pipes.clientOut),
    serverWrites: writes(pipes.serverIn),
    clientWrites: writes(pipes.clientOut),
  };
}

const call = (id: number, path: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'write_file', arguments: { path, content: 'x' } },
  });

describe('the MCP relay (in memory, the real boundary)', () => {
  it('holds the lines after a call until it is judged: a cancellation never overtakes its request', async () => {
    const r = await relayWith(150);
    try {
      const cancel = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}';
      r.clientIn.write(`${call(1, '/repo/notes.txt')}\n${cancel}\n`);
      await until(() => r.toServer.length === 2);
      assert.deepEqual(r.toServer, [call(1, '/repo/notes.txt'), cancel]);
      // The cancelled call is recorded as such; the server's late answer changes nothing.
      r.serverOut.write('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n');
      await until(() => r.toClient.length === 1);
      await r.relay.drain();
      const after = (await r.f.records()).find((x) => x.event.type === 'tool.after');
      assert.equal(after?.event.outcome, 'cancelled');
      assert.equal(after?.source, 'mcp');
    } finally {
      await r.f.close();
    }
  });

  it('judges every call in a batch: the denied one is answered, the rest forwarded together', async () => {
    const r = await relayWith(0);
    try {
      const ping = { jsonrpc: '2.0', id: 3, method: 'ping' };
      const batch = [JSON.parse(call(1, '/repo/a.txt')), JSON.parse(call(2, '/repo/secret/k')), ping];
      r.clientIn.write(`${JSON.stringify(batch)}\n`);
      await until(() => r.toServer.length === 1 && r.toClient.length === 1);
      assert.deepEqual(JSON.parse(r.toServer[0]!), [batch[0], ping]);
      const denied = JSON.parse(r.toClient[0]!) as { id: number; result: { isError: boolean } };
      assert.equal(denied.id, 2);
      assert.equal(denied.result.isError, true);
    } finally {
      await r.f.close();
    }
  });

  it('never forwards a tools/call without an id: it could not be told of a denial', async () => {
    const r = await relayWith(0);
    try {
      const notification = {
        jsonrpc: '2.0',
        method: 'tools/call',
        params: JSON.parse(call(1, '/repo/a.txt')).params,
      };
      const ping = { jsonrpc: '2.0', id: 7, method: 'ping' };
      r.clientIn.write(`${JSON.stringify(notification)}\n${JSON.stringify([notification, ping])}\n`);
      await until(() => r.toClient.length === 2 && r.toServer.length === 1);
      assert.deepEqual(JSON.parse(r.toServer[0]!), [ping], 'only the ping of the batch reached the server');
      for (const answer of r.toClient) {
        const error = JSON.parse(answer) as { id: unknown; error: { code: number; message: string } };
        assert.equal(error.id, null);
        assert.equal(error.error.code, -32600);
        assert.match(error.error.message, /must carry an id/);
      }
    } finally {
      await r.f.close();
    }
  });

  it('a client line over the limit closes the client side and ends the server input; a last line keeps its bytes', async () => {
    const r = await relayWith(0, 256);
    try {
      let ended = false;
      r.serverIn.on('end', () => {
        ended = true;
      });
      r.serverIn.resume();
      r.clientIn.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      r.clientIn.write(`${'x'.repeat(300)}\n`);
      await r.relay.clientDone;
      await until(() => ended);
      assert.deepEqual(r.serverWrites, ['{"jsonrpc":"2.0","method":"notifications/initialized"}\n']);
    } finally {
      await r.f.close();
    }
    const e = await relayWith(0);
    try {
      e.clientIn.end('{"jsonrpc":"2.0","method":"ping","id":1}');
      await e.relay.clientDone;
      assert.deepEqual(e.serverWrites, ['{"jsonrpc":"2.0","method":"ping","id":1}']);
    } finally {
      await e.f.close();
    }
  });

  it('a server line over the limit: the calls it leaves unanswered get an error, not silence', async () => {
    const r = await relayWith(0, 512);
    try {
      r.clientIn.write(`${call(9, '/repo/a.txt')}\n`);
      await until(() => r.toServer.length === 1);
      r.serverOut.write(`${'y'.repeat(600)}\n`);
      await until(() => r.toClient.length === 1);
      const answer = JSON.parse(r.toClient[0]!) as { id: number; error: { code: number; message: string } };
      assert.equal(answer.id, 9);
      assert.equal(answer.error.code, -32603);
      assert.match(answer.error.message, /longer than/);
      await r.relay.drain();
      const after = (await r.f.records()).map((x) => x.event).find((x) => x.type === 'tool.after')!;
      assert.equal(after.outcome, 'cancelled');
    } finally {
      await r.f.close();
    }
  });

  it('a line only the strict parser refuses (a big integer, a lone surrogate) passes unchanged unless it names a followed method', async () => {
    const r = await relayWith(0);
    try {
      const ping = '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"n":12345678901234567890,"s":"é"}}';
      const answer = '{"jsonrpc":"2.0","id":"srv-1","result":{"text":"\\ud800"}}';
      const bigCall = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/repo/secret/x","n":12345678901234567890}}}`;
      const escapedCall =
        '{"jsonrpc":"2.0","id":5,"method":"tools\\/call","params":{"name":"write_file","arguments":{"path":"/repo/secret/x","s":"\\ud800"}}}';
      const twice = '{"jsonrpc":"2.0","id":6,"method":"ping","method":"ping","params":{"s":"é"}}';
      r.clientIn.write(`${ping}\n${answer}\n${bigCall}\n${escapedCall}\n${twice}\n`);
      await until(() => r.toServer.length === 2 && r.toClient.length === 3);
      assert.deepEqual(r.toServer, [ping, answer]);
      for (const refused of r.toClient)
        assert.equal((JSON.parse(refused) as { error: { code: number } }).error.code, -32700, refused);
    } finally {
      await r.f.close();
    }
  });

  it('records a call the server never answered as cancelled when the server goes', async () => {
    const r = await relayWith(0);
    try {
      r.clientIn.write(`${call(7, '/repo/a.txt')}\n`);
      await until(() => r.toServer.length === 1);
      r.relay.serverGone('the server exited (1)');
      await r.relay.drain();
      const events = (await r.f.records()).map((x) => x.event);
      const before = events.find((e) => e.type === 'tool.before')!;
      const after = events.find((e) => e.type === 'tool.after')!;
      assert.equal(after.outcome, 'cancelled');
      assert.deepEqual(after.call, before.call);
      assert.equal(
        (after.extensions as Record<string, { cancelled: string }>)['dev.tally.mcp']!.cancelled,
        'the server exited (1)',
      );
    } finally {
      await r.f.close();
    }
  });

  it('forwards each line in one write, newline included; a line that cannot name a call passes unread', async () => {
    const r = await relayWith(0);
    try {
      // A trailing comma: not JSON, but no parser could read a request from it: the server's to answer.
      const sent = [
        '{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        '{ "jsonrpc" : "2.0", "id" : "srv-2", "result" : {}, }\r\n',
        '\n',
        `${call(3, '/repo/notes.txt')}\n`,
      ];
      r.clientIn.write(sent.join(''));
      await until(() => r.serverWrites.length === 4);
      assert.deepEqual(r.serverWrites, sent, 'one write per line, each the bytes the client wrote');
      assert.deepEqual(r.toClient, [], 'the gateway answered nothing itself');
      // A server line split across its writes reaches the client whole, in one write of its own,
      // and a denial the gateway writes meanwhile never lands inside it.
      const answer = '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}\n';
      r.serverOut.write(answer.slice(0, 20));
      r.clientIn.write(`${call(4, '/repo/secret/k')}\n`);
      await until(() => r.clientWrites.length === 1);
      r.serverOut.write(answer.slice(20));
      await until(() => r.clientWrites.length === 2);
      assert.match(r.clientWrites[0]!, /^\{"jsonrpc":"2.0","id":4,"result":\{.*"isError":true\}\}\n$/);
      assert.equal(r.clientWrites[1], answer);
    } finally {
      await r.f.close();
    }
  });

  it('refuses a request whose id an unanswered or cancelled request holds: each answer stays its own', async () => {
    const r = await relayWith(0);
    try {
      const request = (id: number, method: string, extra = '') =>
        `{"jsonrpc":"2.0","id":${id},"method":"${method}"${extra}}`;
      // A ping given the id of the call in flight.
      r.clientIn.write(`${call(5, '/repo/a.txt')}\n${request(5, 'ping')}\n`);
      await until(() => r.toServer.length === 1 && r.toClient.length === 1);
      // A call given the id of a ping in flight; a ping given the id of one the client cancelled.
      const cancel = (id: number) =>
        `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`;
      r.clientIn.write(
        `${request(9, 'ping')}\n${call(9, '/repo/b.txt')}\n${request(10, 'resources/list')}\n${cancel(10)}\n${request(10, 'ping')}\n`,
      );
      await until(() => r.toServer.length === 4 && r.toClient.length === 3);
      assert.deepEqual(r.toServer, [
        call(5, '/repo/a.txt'),
        request(9, 'ping'),
        request(10, 'resources/list'),
        cancel(10),
      ]);
      for (const [i, id] of [5, 9, 10].entries()) {
        const refused = JSON.parse(r.toClient[i]!) as {
          id: number;
          error: { code: number; message: string };
        };
        assert.equal(refused.id, id);
        assert.equal(refused.error.code, -32600);
        assert.match(refused.error.message, /is in use by a request not yet answered/);
      }
      // The server answers in an order of its own; each answer is matched to its own request.
      const result = { content: [{ type: 'text', text: 'five' }] };
      r.serverOut.write(`{"jsonrpc":"2.0","id":10,"result":{"resources":[]}}\n`);
      r.serverOut.write(`{"jsonrpc":"2.0","id":9,"result":{}}\n`);
      r.serverOut.write(`${JSON.stringify({ jsonrpc: '2.0', id: 5, result })}\n`);
      await until(() => r.toClient.length === 6);
      // Once answered, an id is free again.
      r.clientIn.write(`${call(9, '/repo/c.txt')}\n`);
      await until(() => r.toServer.length === 5);
      await r.relay.drain();
      const events = (await r.f.records()).map((x) => x.event);
      const befores = events.filter((e) => e.type === 'tool.before');
      assert.deepEqual(
        befores.map((e) => (e.tool as { input: { path: string } }).input.path),
        ['/repo/a.txt', '/repo/c.txt'],
        'the refused call was never judged',
      );
      const after = events.find((e) => e.type === 'tool.after')!;
      assert.deepEqual(after.call, befores[0]!.call);
      assert.equal(after.outcome, 'ok');
      // RFC 8785 of the server's answer to call 5 (its keys already in order but for `text`/`type`).
      const canonical = '{"content":[{"text":"five","type":"text"}]}';
      assert.equal(
        (after.extensions as Record<string, { result_digest: string }>)['dev.tally.mcp']!.result_digest,
        `sha256:${createHash('sha256').update(canonical).digest('hex')}`,
      );
    } finally {
      await r.f.close();
    }
  });

  it('reads a line that could be a request, and answers one that is not JSON itself', async () => {
    const r = await relayWith(0);
    try {
      const sent = [
        '{ "jsonrpc" : "2.0", "id" : 2, "method" : "resources/list", }',
        '{"jsonrpc":"2.0","id":3,"METHOD":"ping"}',
      ];
      r.clientIn.write(`${sent.join('\n')}\n`);
      await until(() => r.toClient.length === 2);
      assert.deepEqual(
        r.toClient.map((l) => (JSON.parse(l) as { error: { code: number } }).error.code),
        [-32700, -32600],
      );
      assert.deepEqual(r.toServer, [], 'the server saw neither');
    } finally {
      await r.f.close();
    }
  });

  it('reads every line from which a parser could read a call, however it is spelled', async () => {
    const r = await relayWith(0);
    try {
      const secret = '"params":{"name":"write_file","arguments":{"path":"/repo/secret/k","content":"x"}}';
      const sent = [
        // An escape spelling the method: read, judged and denied.
        Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools\\/call",${secret}}\n`),
        // A call split over two lines, for a parser that ignores newlines: neither line is JSON.
        Buffer.from(`{"jsonrpc":"2.0","id":2,"method":"tools/\ncall",${secret}}\n`),
        // An overlong UTF-8 '/', which a lax decoder reads as one: not UTF-8.
        Buffer.concat([
          Buffer.from('{"jsonrpc":"2.0","id":3,"method":"tools'),
          Buffer.from([0xc0, 0xaf]),
          Buffer.from(`call",${secret}}\n`),
        ]),
        // Two methods, for parsers that disagree on which wins.
        Buffer.from(`{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/call",${secret}}\n`),
      ];
      r.clientIn.write(Buffer.concat(sent));
      await until(() => r.toClient.length === 5);
      const answers = r.toClient.map((l) => JSON.parse(l) as { id: unknown; error?: { code: number } });
      assert.deepEqual(
        answers.map((a) => [a.id, a.error?.code]),
        [
          [1, undefined],
          [null, -32700],
          [null, -32700],
          [null, -32700],
          [null, -32700],
        ],
      );
      assert.match(r.toClient[0]!, /"isError":true/);
      assert.deepEqual(r.toServer, [], 'the server saw none of them');
    } finally {
      await r.f.close();
    }
  });
});
