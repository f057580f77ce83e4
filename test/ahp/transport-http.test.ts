/**
 * The HTTP binding against real loopback servers. Oracles: the binding's rules — one JSON-RPC
 * object per POST with `Content-Type: application/json`; 200 + the correlated response for a
 * request; 202 or 204 with no body for a notification; any other status (a redirect included, as
 * redirects are not followed) is an operational failure; plain http only to loopback.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTransport } from '../../src/ahp/transports/index.js';
import { TransportError } from '../../src/ahp/transports/transport.js';
import { answerFor, json, suiteServers } from './http-servers.js';
import { codeOf, httpBackend, interceptRequest, never, options } from './transport-helpers.js';

const note = { jsonrpc: '2.0' as const, method: 'hooks/observe', params: { protocolVersion: 'draft' } };

describe('HTTP transport', { timeout: 30_000 }, () => {
  const serve = suiteServers();

  test('a request is one POST of one JSON object; 200 + application/json answers it', async () => {
    const s = await serve((seen, res) => json(res, 200, answerFor(seen)));
    const t = createTransport(httpBackend(`${s.url}/hooks?tenant=a`), options());
    const req = interceptRequest();
    const answer = (await t.request(req, never())) as { id: unknown };
    assert.equal(answer.id, req.id);
    assert.equal(s.seen.length, 1);
    assert.equal(s.seen[0]!.method, 'POST');
    assert.equal(s.seen[0]!.url, '/hooks?tenant=a');
    assert.equal(s.seen[0]!.headers['content-type'], 'application/json');
    assert.deepStrictEqual(JSON.parse(s.seen[0]!.body.toString('utf8')), req);
    assert.equal(
      s.seen[0]!.headers.authorization,
      undefined,
      'no credential without a binding or a challenge',
    );
    await t.close();
  });

  test('requests reuse one keep-alive connection per backend', async () => {
    const s = await serve((seen, res) => json(res, 200, answerFor(seen)));
    const t = createTransport(httpBackend(s.url), options());
    for (let i = 0; i < 5; i++) await t.request(interceptRequest(), never());
    assert.equal(s.connections, 1);
    await t.close();
  });

  test('a notification is accepted with 202 or 204 only', async () => {
    for (const [status, ok] of [
      [204, true],
      [202, true],
      [200, false],
      [500, false],
    ] as const) {
      const s = await serve((_seen, res) => res.writeHead(status).end());
      const t = createTransport(httpBackend(s.url), options());
      if (ok) await t.notify(note, never());
      else assert.equal(await codeOf(t.notify(note, never())), 'http-status', String(status));
      await t.close();
    }
  });

  test('other statuses fail, and redirects are not followed', async () => {
    const target = await serve((seen, res) => json(res, 200, answerFor(seen)));
    for (const status of [201, 202, 204, 301, 302, 307, 308, 400, 404, 500, 503]) {
      const s = await serve((_seen, res) =>
        res.writeHead(status, { location: `${target.url}/elsewhere` }).end(),
      );
      const t = createTransport(httpBackend(s.url), options());
      const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
      assert.ok(error instanceof TransportError);
      assert.equal(error.code, 'http-status', String(status));
      assert.equal(error.detail?.status, status);
      await t.close();
    }
    assert.equal(target.seen.length, 0, 'a redirect target was contacted');
  });

  test('a 200 that is not application/json, not JSON, or a batch is refused', async () => {
    const cases: [string, (res: import('node:http').ServerResponse) => void][] = [
      ['content-type', (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('{}')],
      ['content-type', (res) => res.writeHead(200).end('{}')],
      ['protocol', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":')],
      ['protocol', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[{}]')],
      ['protocol', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1,"a":2}')],
    ];
    for (const [code, answer] of cases) {
      const s = await serve((_seen, res) => answer(res));
      const t = createTransport(httpBackend(s.url), options());
      assert.equal(await codeOf(t.request(interceptRequest(), never())), code);
      await t.close();
    }
    const charset = await serve((seen, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(answerFor(seen))),
    );
    const t = createTransport(httpBackend(charset.url), options());
    await t.request(interceptRequest(), never());
    await t.close();
  });

  test('a body over the limit is refused (declared or streamed)', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 'x', result: { pad: 'y'.repeat(5000) } });
    const declared = await serve((_seen, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(big),
    );
    const streamed = await serve((_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(big.slice(0, 2500));
      res.end(big.slice(2500));
    });
    for (const s of [declared, streamed]) {
      const t = createTransport(httpBackend(s.url), options({ maxBodyBytes: 1024 }));
      assert.equal(await codeOf(t.request(interceptRequest(), never())), 'too-large');
      await t.close();
    }
  });

  test('plain http only to loopback; credentials never in the URL', () => {
    for (const url of ['http://example.com/hooks', 'http://10.0.0.1/hooks', 'ftp://127.0.0.1/']) {
      assert.throws(
        () => createTransport(httpBackend(url), options()),
        (e: unknown) => e instanceof TransportError && e.code === 'transport',
      );
    }
    for (const url of [
      'http://127.0.0.1:1/',
      'http://localhost:1/',
      'http://[::1]:1/',
      'https://example.com/hooks',
    ]) {
      createTransport(httpBackend(url), options());
    }
    assert.throws(
      () => createTransport(httpBackend('https://user:hunter2@example.com/'), options()),
      (e: unknown) => e instanceof TransportError && e.code === 'auth' && !e.message.includes('hunter2'),
    );
  });

  test('a refused connection is a transport failure', async () => {
    const s = await serve(() => {});
    const url = s.url;
    await s.close();
    const t = createTransport(httpBackend(url), options());
    assert.equal(await codeOf(t.request(interceptRequest(), never())), 'transport');
    await t.close();
  });

  test('close settles a request in flight as closed, and later calls too', async () => {
    const s = await serve(() => {});
    const t = createTransport(httpBackend(s.url), options());
    const pending = codeOf(t.request(interceptRequest(), never()));
    while (s.seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    await t.close();
    assert.equal(await pending, 'closed');
    assert.equal(await codeOf(t.request(interceptRequest(), never())), 'closed');
  });
});
