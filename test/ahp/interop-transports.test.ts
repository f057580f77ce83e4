/**
 * Every row of the official interop `scenarios.json`, replayed through the real dispatcher over
 * the two real transports: HTTP to a `node:http` server on 127.0.0.1 that answers each request
 * with the row's `response` untouched, and stdio `persistent` to a real child process that does
 * the same from the same file. The oracles are the rows themselves (see scenario-replay.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createTransport } from '../../src/ahp/transports/index.js';
import { INTEROP, replayScenarios } from './scenario-replay.js';
import { httpBackend, options, stdioBackend } from './transport-helpers.js';

const servers: Server[] = [];

replayScenarios(async (scripted) => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = scripted.handle(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      if (answer === undefined) {
        res.writeHead(204).end();
        return;
      }
      const body = JSON.stringify(answer);
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        .end(body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const transport = createTransport(httpBackend(url), options());
  return {
    request: (m, s) => transport.request(m, s),
    notify: (m, s) => transport.notify(m, s),
    close: async () => {
      await transport.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}, 'HTTP (node:http on 127.0.0.1)');

replayScenarios(
  () =>
    createTransport(stdioBackend('scripted', [fileURLToPath(new URL('scenarios.json', INTEROP))]), options()),
  'stdio persistent (child process)',
  // `wrong-response-id` waits out the deadline for a live answer before its stray one is rejected.
  2000,
);
