/** Real loopback HTTP servers for the transport, auth and upload tests. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: Buffer;
}

export interface TestServer {
  server: Server;
  url: string;
  seen: Seen[];
  connections: number;
  close(): Promise<void>;
}

export type Route = (seen: Seen, res: ServerResponse, req: IncomingMessage) => void;

/** Starts a server on 127.0.0.1 port 0 that records every request and lets `route` answer it. */
export async function startServer(route: Route): Promise<TestServer> {
  const seen: Seen[] = [];
  const state = { connections: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const record: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      };
      seen.push(record);
      route(record, res, req);
    });
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    seen,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** An empty-effects answer to whatever request `seen` carried. */
export function answerFor(seen: Seen): unknown {
  const request = JSON.parse(seen.body.toString('utf8')) as { id: unknown };
  return { jsonrpc: '2.0', id: request.id, result: { protocolVersion: 'draft', effects: [] } };
}

/**
 * Starts servers for the suite it is called in (inside `describe`) and closes them all after it:
 * the returned function is `startServer`, with the closing taken care of.
 */
export function suiteServers(): (route: Route) => Promise<TestServer> {
  const servers: TestServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));
  return async (route) => {
    const server = await startServer(route);
    servers.push(server);
    return server;
  };
}
