/**
 * The egress sink: an HTTP proxy on 127.0.0.1 that refuses everything with 403 (plain requests and
 * CONNECT tunnels alike) and records each attempt. Every agent run points its proxy variables at it,
 * so an agent that tries to leave the machine (telemetry, update checks, plugin installs) is seen
 * and stopped instead of silently reaching, or hanging on, the network.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface EgressAttempt {
  /** CONNECT for tunnels (HTTPS), else the HTTP method. */
  method: string;
  /** host:port for CONNECT, the absolute URL for plain proxied requests. */
  target: string;
  userAgent?: string;
}

export interface EgressSink {
  url: string;
  attempts: EgressAttempt[];
  /** The proxy variables an agent run gets (both spellings; loopback exempt). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startEgressSink(): Promise<EgressSink> {
  const attempts: EgressAttempt[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    attempts.push({ method: req.method ?? '', target: req.url ?? '', userAgent: req.headers['user-agent'] });
    req.resume();
    res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' });
    res.end('egress refused by the test sink\n');
  });
  server.on('connect', (req, socket: Socket) => {
    attempts.push({ method: 'CONNECT', target: req.url ?? '', userAgent: req.headers['user-agent'] });
    socket.on('error', () => {});
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    attempts,
    env: {
      HTTPS_PROXY: url,
      HTTP_PROXY: url,
      https_proxy: url,
      http_proxy: url,
      ALL_PROXY: url,
      all_proxy: url,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
