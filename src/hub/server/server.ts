/**
 * `tally hub serve`: node:http in front of the route table. Per request: route, per-IP rate
 * limit (counted in the shared store), the handler, and one JSON error body for every refusal.
 * The server holds no state of its own beyond the store connection, so any number of replicas
 * can run against one PostgreSQL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HubStoreError } from '../store/hub-store.js';
import type { Exchange, Hub } from './context.js';
import { HUB_ERRORS, HubHttpError, sendError } from './errors.js';
import { isPagePath, sendPageError } from './handlers/pages.js';
import { rateLimit } from './limits.js';
import { matchRoute } from './routes.js';

export interface HubServerOptions {
  /** Take the client address from the last X-Forwarded-For hop (only behind a trusted proxy). */
  trustProxy?: boolean;
  onError?: (error: unknown) => void;
}

function clientIp(req: http.IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? ''))
      .split(',')
      .pop()
      ?.trim();
    if (last) return last;
  }
  return req.socket.remoteAddress ?? 'unknown';
}

function asHttpError(error: unknown): HubHttpError {
  if (error instanceof HubHttpError) return error;
  if (error instanceof HubStoreError && error.code === 'unavailable')
    return new HubHttpError('unavailable', 'the hub store is unavailable; retry');
  if (error instanceof HubStoreError && error.code === 'not-found')
    return new HubHttpError('not-found', error.message);
  return new HubHttpError('internal', 'internal error');
}

export function createHubServer(hub: Hub, options: HubServerOptions = {}): http.Server {
  const server = http.createServer(
    { requestTimeout: 300_000, headersTimeout: 30_000, maxHeaderSize: 16_384 },
    (req, res) => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://hub.invalid');
        const ip = clientIp(req, options.trustProxy ?? false);
        try {
          const match = matchRoute(req.method ?? 'GET', url.pathname);
          if (match === null) throw new HubHttpError('not-found', `no route ${url.pathname}`);
          if ('allowed' in match)
            throw new HubHttpError('method-not-allowed', `${req.method} is not allowed on ${url.pathname}`, {
              detail: { allowed: match.allowed },
            });
          await rateLimit(hub.store, [[`ip:${ip}`, hub.limits.perIp]]);
          if (match.route.signed && req.headers['signature-input'] === undefined)
            throw new HubHttpError(
              'unauthenticated',
              'writes need an RFC 9421 signature by the ship key (see docs/hub.md)',
            );
          const exchange: Exchange = { req, res, params: match.params, query: url.searchParams, ip };
          await match.route.handler(hub, exchange);
        } catch (error) {
          const httpError = asHttpError(error);
          if (httpError.code === 'internal') options.onError?.(error);
          const headers: Record<string, string> = {};
          if (httpError.code === 'rate-limited')
            headers['retry-after'] = String(httpError.detail?.retry_after ?? 60);
          if (httpError.code === 'method-not-allowed')
            headers.allow = (httpError.detail?.allowed as string[] | undefined)?.join(', ') ?? '';
          // A refused upload may still be arriving: answer, then close rather than read it all.
          if (!req.complete) headers.connection = 'close';
          if (!req.complete) res.once('finish', () => req.destroy());
          if (req.method === 'GET' && isPagePath(url.pathname) && !res.headersSent)
            sendPageError(res, HUB_ERRORS[httpError.code], httpError.message);
          else sendError(res, httpError, headers);
        }
      })();
    },
  );
  return server;
}

export function listen(server: http.Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
