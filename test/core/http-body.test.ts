/**
 * The one body reader of every Tally server, on a real node:http server on 127.0.0.1: a body sent in
 * pieces arrives whole and byte for byte; a declared length over the limit is refused before a byte
 * is read; a chunked body that grows past the limit is refused as it does; a client that goes away
 * mid-body is an error, not a short body.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { readBody } from '../../src/core/http-body.js';

const LIMIT = 64 * 1024;
const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A server that reads each body and reports, per request, the bytes or the error's message. */
async function reader(): Promise<{ port: number; outcomes: Promise<Buffer | Error>[] }> {
  const outcomes: Promise<Buffer | Error>[] = [];
  const server = createServer((req, res) => {
    const outcome = readBody(req, LIMIT, (message) => new Error(`too large: ${message}`)).then(
      (bytes) => bytes,
      (error: Error) => error,
    );
    outcomes.push(outcome);
    void outcome.then((got) => {
      if (!res.destroyed) res.end(got instanceof Error ? 'error' : String(got.length));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, outcomes };
}

/**
 * Sends `pieces`; with `abortOnce`, goes away without ending the body once it says the server has
 * the request (destroyed any earlier, the request might never reach the server at all).
 */
function send(
  port: number,
  pieces: Buffer[],
  headers: Record<string, string>,
  abortOnce?: () => boolean,
): Promise<void> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', () => resolve());
    void (async () => {
      for (const piece of pieces) {
        req.write(piece);
        await sleep(5);
      }
      if (abortOnce) {
        while (!abortOnce()) await sleep(2);
        req.destroy();
        resolve();
      } else req.end();
    })();
  });
}

describe('readBody', () => {
  it('reads a body sent in pieces whole, byte for byte', async () => {
    const { port, outcomes } = await reader();
    const pieces = [Buffer.from('{"a":'), Buffer.from([0xc3, 0xa9, 0x00, 0xff]), Buffer.from('}')];
    await send(port, pieces, { 'content-type': 'application/json' });
    const got = await outcomes[0]!;
    assert.ok(Buffer.isBuffer(got) && got.equals(Buffer.concat(pieces)));
  });

  it('refuses a declared length over the limit, and a chunked body once it passes it', async () => {
    const { port, outcomes } = await reader();
    await send(port, [Buffer.alloc(10)], { 'content-length': String(LIMIT + 1) }, () => outcomes.length > 0);
    const declared = await outcomes[0]!;
    assert.ok(declared instanceof Error);
    assert.match(declared.message, new RegExp(`too large: the body is ${LIMIT + 1} bytes; at most ${LIMIT}`));
    await send(port, [Buffer.alloc(LIMIT - 10), Buffer.alloc(20)], { 'transfer-encoding': 'chunked' });
    const grown = await outcomes[1]!;
    assert.ok(grown instanceof Error);
    assert.match(grown.message, new RegExp(`too large: the body is over the ${LIMIT} bytes accepted`));
  });

  it('is an error when the client goes away before the body ends', async () => {
    const { port, outcomes } = await reader();
    await send(port, [Buffer.from('{"partial":')], { 'content-length': '100' }, () => outcomes.length > 0);
    const got = await outcomes[0]!;
    assert.ok(got instanceof Error, 'not a short body');
  });
});
