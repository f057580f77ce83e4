/**
 * The backend kit's HTTP body limit, seen from a raw socket: bytes written by hand so a test can
 * declare a length it never sends, or stream a chunked body that never ends.
 *
 * Oracles: RFC 9110 (413 Content Too Large; `Expect: 100-continue` may be answered with a final
 * status instead of 100; `Connection: close` when the server will not read the rest), RFC 9112
 * (chunked framing; the server closing after a `Connection: close` answer), and an official
 * intercept request from the interop scenarios as the body. The kit's limit is inclusive: a body
 * of exactly `maxBodyBytes` is read and answered.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createBackend } from '../../src/ahp/backend/kit.js';
import { loadScenarioRows } from './scenario-replay.js';
import { tempDir } from './transport-helpers.js';

const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));
const REQUEST = JSON.stringify(loadScenarioRows().find((r) => r.id === 'deny-blocks')!.request);
/** Room for the request plus padding; JSON allows the trailing spaces that fill a body to size. */
const LIMIT = Buffer.byteLength(REQUEST) + 64;
/** Generous; only here so a hung server fails the test with a message instead of stalling it. */
const SAFETY_MS = 10_000;

/** A valid request padded with trailing whitespace to exactly `size` bytes. */
const padded = (size: number) => REQUEST + ' '.repeat(size - Buffer.byteLength(REQUEST));

interface Exchange {
  socket: Socket;
  /** Everything the server has sent so far. */
  received: () => string;
  /** Resolves once a final (non-1xx) response head has arrived, or the server closed. */
  answered: Promise<string>;
  /** Resolves once the connection is closed (by either side, or by a reset). */
  closed: Promise<void>;
}

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${SAFETY_MS} ms`)), SAFETY_MS);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** The status line of the first complete non-1xx response head in `text`, if any. */
function finalStatus(text: string): string | undefined {
  for (const head of text.split('\r\n\r\n').slice(0, -1)) {
    const line = head.slice(head.lastIndexOf('HTTP/1.1 '));
    if (/^HTTP\/1\.1 [2-5]\d\d/.test(line)) return line.split('\r\n')[0];
  }
  return undefined;
}

function open(port: number, head: string[]): Exchange {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  let gotAnswer: (status: string) => void = () => {};
  const answered = new Promise<string>((r) => (gotAnswer = r));
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    const status = finalStatus(text);
    if (status !== undefined) gotAnswer(status);
  });
  // A write racing the server's close may fail with EPIPE/ECONNRESET; the answer is what counts.
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  closed.then(() => gotAnswer(finalStatus(text) ?? '(closed without an answer)'));
  socket.write(`${head.join('\r\n')}\r\n\r\n`);
  return { socket, received: () => text, answered, closed };
}

const postHead = (extra: string[]) => [
  'POST / HTTP/1.1',
  'Host: 127.0.0.1',
  'Content-Type: application/json',
  ...extra,
];

/** The header `name` of the final response in `text`, lower-cased, or undefined. */
function header(text: string, name: string): string | undefined {
  const match = new RegExp(`\\r\\n${name}: *([^\\r]*)`, 'i').exec(text.slice(text.lastIndexOf('HTTP/1.1 ')));
  return match?.[1]?.toLowerCase();
}

describe('backend kit: HTTP body limit', { timeout: 30_000 }, () => {
  let calls = 0;
  const kit = createBackend({
    intercept: () => {
      calls++;
      return [];
    },
    observe: () => {
      calls++;
    },
    maxBodyBytes: LIMIT,
  });
  const server: Server = createServer(kit.http).on('checkContinue', kit.checkContinue);
  const plain: Server = createServer(kit.http);
  let port = 0;
  let plainPort = 0;
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
    plainPort = (plain.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    plain.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await new Promise<void>((r) => plain.close(() => r()));
  });

  test('a declared Content-Length over the limit is answered 413 at once; the body is never sent', async () => {
    calls = 0;
    const x = open(plainPort, postHead(['Content-Length: 9999999']));
    x.socket.write('{"jsonrpc":"2.0",');
    const status = await within(x.answered, '413 for a declared length');
    assert.match(status, /^HTTP\/1\.1 413 /);
    assert.equal(header(x.received(), 'connection'), 'close');
    await within(x.closed, 'close after the 413');
    assert.equal(calls, 0);
  });

  test('a chunked body that never ends is answered 413 once it crosses the limit', async () => {
    calls = 0;
    const x = open(plainPort, postHead(['Transfer-Encoding: chunked']));
    const piece = ' '.repeat(100);
    const frame = `${piece.length.toString(16)}\r\n${piece}\r\n`;
    let sent = 0;
    let stop = false;
    x.answered.then(() => (stop = true));
    const pump = (error?: Error | null) => {
      if (stop || error || x.socket.destroyed) return;
      sent += piece.length;
      x.socket.write(frame, pump);
    };
    x.socket.write(`${REQUEST.length.toString(16)}\r\n${REQUEST}\r\n`, pump);
    const status = await within(x.answered, '413 for an endless chunked body');
    stop = true;
    assert.match(status, /^HTTP\/1\.1 413 /);
    assert.equal(header(x.received(), 'connection'), 'close');
    assert.ok(Buffer.byteLength(REQUEST) + sent > LIMIT, 'the answer came after the limit was crossed');
    await within(x.closed, 'close after the 413');
    assert.equal(calls, 0);
  });

  test('a complete chunked body one byte over the limit is refused and never reaches the handler', async () => {
    calls = 0;
    const body = padded(LIMIT + 1);
    const x = open(plainPort, postHead(['Transfer-Encoding: chunked']));
    x.socket.write(`${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    assert.match(await within(x.answered, '413'), /^HTTP\/1\.1 413 /);
    await within(x.closed, 'close after the 413');
    assert.equal(calls, 0);
  });

  test('a body of exactly the limit is answered normally, declared or chunked', async () => {
    calls = 0;
    const body = padded(LIMIT);
    const declared = open(plainPort, postHead([`Content-Length: ${LIMIT}`, 'Connection: close']));
    declared.socket.write(body);
    assert.match(await within(declared.answered, '200'), /^HTTP\/1\.1 200 /);
    const chunked = open(plainPort, postHead(['Transfer-Encoding: chunked', 'Connection: close']));
    chunked.socket.write(`${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    assert.match(await within(chunked.answered, '200'), /^HTTP\/1\.1 200 /);
    assert.equal(calls, 2);
    declared.socket.destroy();
    chunked.socket.destroy();
  });

  test('with checkContinue, an over-limit declared length gets 413 instead of 100 Continue', async () => {
    calls = 0;
    const x = open(port, postHead(['Content-Length: 9999999', 'Expect: 100-continue']));
    const status = await within(x.answered, '413 before 100 Continue');
    assert.match(status, /^HTTP\/1\.1 413 /);
    assert.doesNotMatch(x.received(), /HTTP\/1\.1 100/);
    await within(x.closed, 'close after the 413');
    assert.equal(calls, 0);
  });

  test('with checkContinue, a body within the limit gets 100 Continue and then its answer', async () => {
    calls = 0;
    const x = open(port, postHead([`Content-Length: ${LIMIT}`, 'Expect: 100-continue', 'Connection: close']));
    await within(
      new Promise<void>((r) =>
        x.socket.on('data', () => {
          if (x.received().startsWith('HTTP/1.1 100')) r();
        }),
      ),
      '100 Continue',
    );
    x.socket.write(padded(LIMIT));
    assert.match(await within(x.answered, '200 after 100 Continue'), /^HTTP\/1\.1 200 /);
    assert.equal(calls, 1);
    x.socket.destroy();
  });
});

describe('tally ahp serve --port refuses an over-limit body before 100 Continue', { timeout: 30_000 }, () => {
  test('a declared 9999999 bytes (over the 4 MiB default) gets 413, not 100 Continue', async () => {
    const rules = join(tempDir(), 'rules.json');
    writeFileSync(rules, JSON.stringify({ rules: [{ events: ['tool.before'], effect: 'allow' }] }));
    const child = spawn(
      process.execPath,
      [TALLY, 'ahp', 'serve', '--port', '0', '--rules', rules, '--json'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const first = await within(
        new Promise<string>((r) => child.stdout.once('data', (c) => r(String(c)))),
        'the bound port',
      );
      const { port } = JSON.parse(first) as { port: number };
      const x = open(port, postHead(['Content-Length: 9999999', 'Expect: 100-continue']));
      assert.match(await within(x.answered, '413 from serve'), /^HTTP\/1\.1 413 /);
      assert.doesNotMatch(x.received(), /HTTP\/1\.1 100/);
      await within(x.closed, 'close after the 413');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await new Promise<number | null>((r) => child.on('exit', r)), 0);
  });
});
