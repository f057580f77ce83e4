/**
 * The shim's one POST over a bare connection, opened both ways (libuv's TCP binding and node:net),
 * against real servers on 127.0.0.1: node:http answering with a length, chunked, late and in
 * megabytes; raw sockets answering in pieces, without closing, close-delimited, cut short and reset;
 * a refused port and a silent server.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseReply, postHook, RecorderUnreachable } from '../../src/cli/hook-post.js';
import { connectLoopback, VERIFIED_MAJORS } from '../../src/cli/loopback.js';

/**
 * Both ways the shim can open its connection: libuv's TCP binding (by default on the Node majors it
 * was verified on; forced elsewhere, so that this file is how a new major gets verified) and node:net.
 */
const WAYS = [
  [
    'binding',
    VERIFIED_MAJORS.includes(process.versions.node.split('.')[0]!) ? {} : { TALLY_HOOK_SOCKET: 'binding' },
  ],
  ['net', { TALLY_HOOK_SOCKET: 'net' }],
] as const;

const servers: Server[] = [];
const sockets: Socket[] = [];
after(() => {
  for (const s of sockets) s.destroy();
  for (const s of servers) s.close();
});

async function listening<T extends Server>(server: T): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw server: `answer` gets each connection and the request bytes once their head has arrived. */
function rawServer(answer: (socket: Socket, request: Buffer) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.push(socket);
    const chunks: Buffer[] = [];
    let answered = false;
    socket.on('data', (c) => {
      chunks.push(c);
      if (!answered && Buffer.concat(chunks).includes('\r\n\r\n')) {
        answered = true;
        answer(socket, Buffer.concat(chunks));
      }
    });
    socket.on('error', () => {});
  });
  return listening(server);
}

for (const [way, env] of WAYS)
  describe(`postHook, over ${way}`, () => {
    it('opens its connection that way', async () => {
      const port = await rawServer((socket) => socket.end('HTTP/1.1 204 No Content\r\n\r\n'));
      const opened = connectLoopback(port, { data() {}, end() {}, error() {} }, env);
      opened.release();
      assert.equal(opened.via, way);
    });

    it('sends the body as it is with the headers, and reads a Content-Length answer', async () => {
      const seen: { req: IncomingMessage; body: Buffer }[] = [];
      const port = await listening(
        createHttpServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            seen.push({ req, body: Buffer.concat(chunks) });
            res.setHeader('content-type', 'application/json');
            res.end('{"ok":"é"}');
          });
        }),
      );
      const body = Buffer.from('{"x": 1,  "é": "\\u0000"}\n');
      const reply = await postHook(
        port,
        '/hooks/claude-code?agent=a',
        { 'x-tally-session': 'ses_1' },
        body,
        5000,
        env,
      );
      assert.deepEqual(reply, { status: 200, text: '{"ok":"é"}' });
      const [{ req, body: got } = assert.fail('no request')] = seen;
      assert.equal(req.method, 'POST');
      assert.equal(req.url, '/hooks/claude-code?agent=a');
      assert.equal(req.headers['x-tally-session'], 'ses_1');
      assert.equal(req.headers.host, `127.0.0.1:${port}`);
      assert.equal(req.headers.connection, 'close');
      assert.equal(req.headers['content-length'], String(body.length));
      assert.ok(got.equals(body), 'the bytes as given, not re-serialised');
    });

    it('gets the answer node:http writes after a while, chunked (the request is not half-closed)', async () => {
      const port = await listening(
        createHttpServer(async (req, res) => {
          req.resume();
          await sleep(150);
          res.statusCode = 409;
          res.write('{"error":');
          await sleep(20);
          res.end('"late"}');
        }),
      );
      const reply = await postHook(port, '/', {}, Buffer.from('{}'), 5000, env);
      assert.deepEqual(reply, { status: 409, text: '{"error":"late"}' });
    });

    it('resolves once the answer is whole, though the server keeps the connection open', async () => {
      const port = await rawServer((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n');
        setTimeout(() => socket.write('{}'), 20);
      });
      const started = Date.now();
      assert.deepEqual(await postHook(port, '/', {}, Buffer.from('{}'), 5000, env), {
        status: 200,
        text: '{}',
      });
      assert.ok(Date.now() - started < 2000);
    });

    it('decodes a chunked answer that arrives in pieces, split inside the chunk sizes', async () => {
      const pieces = [
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n',
        '5\r',
        '\nhel',
        'lo\r\n6;x=1\r\n worl',
        'd\r\n0\r\n\r\n',
      ];
      const port = await rawServer(async (socket) => {
        for (const p of pieces) {
          socket.write(p);
          await sleep(10);
        }
      });
      assert.deepEqual(await postHook(port, '/', {}, Buffer.from('{}'), 5000, env), {
        status: 200,
        text: 'hello world',
      });
    });

    it('reads a close-delimited answer to the end', async () => {
      const port = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\n\r\n{"all":true}'));
      assert.deepEqual(await postHook(port, '/', {}, Buffer.from('{}'), 5000, env), {
        status: 200,
        text: '{"all":true}',
      });
    });

    it('rejects an answer cut short, and one that is not HTTP, as errors other than unreachable', async () => {
      const short = await rawServer((socket) =>
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}'),
      );
      const notHttp = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH\r\n\r\n'));
      for (const [port, message] of [
        [short, /mid-answer/],
        [notHttp, /not HTTP/],
      ] as const) {
        const error = await postHook(port, '/', {}, Buffer.from('{}'), 5000, env).then(
          () => assert.fail('resolved'),
          (e: Error) => e,
        );
        assert.match(error.message, message);
        assert.ok(!(error instanceof RecorderUnreachable));
      }
    });

    it('is unreachable on a refused port and on a server that never answers', async () => {
      const closed = createServer();
      const port = await listening(closed);
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      await assert.rejects(
        postHook(port, '/', {}, Buffer.from('{}'), 5000, env),
        (e: Error) => e instanceof RecorderUnreachable && /ECONNREFUSED/.test(e.message),
      );
      const silent = await rawServer(() => {});
      await assert.rejects(
        postHook(silent, '/', {}, Buffer.from('{}'), 200, env),
        (e: Error) => e instanceof RecorderUnreachable && /timed out/.test(e.message),
      );
    });

    it('sends a body of megabytes whole, and reads an answer of megabytes', async () => {
      const big = Buffer.alloc(4 * 1024 * 1024, 0x61);
      const port = await listening(
        createHttpServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            const got = Buffer.concat(chunks);
            res.end(
              `{"bytes":${got.length},"same":${got.equals(big)},"pad":"${'b'.repeat(3 * 1024 * 1024)}"}`,
            );
          });
        }),
      );
      const reply = await postHook(port, '/', {}, big, 5000, env);
      const answer = JSON.parse(reply.text) as { bytes: number; same: boolean; pad: string };
      assert.equal(answer.bytes, big.length);
      assert.equal(answer.same, true);
      assert.equal(answer.pad.length, 3 * 1024 * 1024);
    });

    it('is unreachable when the server resets the connection before answering', async () => {
      const port = await rawServer((socket) => socket.resetAndDestroy());
      await assert.rejects(
        postHook(port, '/', {}, Buffer.from('{}'), 5000, env),
        (e: Error) => e instanceof RecorderUnreachable && /ECONNRESET/.test(e.message),
      );
    });

    it('refuses a header value that would end the header, before connecting', async () => {
      let connected = false;
      const port = await rawServer(() => {
        connected = true;
      });
      assert.throws(
        () => postHook(port, '/', { 'x-tally-session': 'ses_1\r\nx-evil: 1' }, Buffer.from('{}'), 5000, env),
        /x-tally-session header/,
      );
      await sleep(50);
      assert.equal(connected, false);
    });
  });

describe('parseReply', () => {
  it('waits for the rest of a head, a length or the last chunk; ends a bodiless-length answer at close', () => {
    assert.equal(parseReply(Buffer.from('HTTP/1.1 200 OK\r\nContent-Le'), false), undefined);
    assert.equal(parseReply(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nab'), false), undefined);
    assert.equal(
      parseReply(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n'), false),
      undefined,
    );
    assert.equal(parseReply(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'), false), undefined);
    assert.deepEqual(parseReply(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'), true), {
      status: 204,
      text: '',
    });
    assert.throws(() => parseReply(Buffer.from('HTTP/1.1 200'), true), /before its answer/);
    assert.throws(
      () => parseReply(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'), false),
      /malformed chunk/,
    );
  });
});
