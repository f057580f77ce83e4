/**
 * One HTTP exchange with the rules every AHP client call shares: no redirects followed, a bound on
 * the response body, prompt settlement when the signal aborts (during connect, send or receive),
 * and plain `http` only to a loopback host. Used by the event transport, OAuth discovery and uploads.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { TransportError } from './transport.js';

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface ExchangeOptions {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Buffer;
  /** The caller's deadline: its abort ends the exchange as a timeout. */
  signal: AbortSignal;
  /** The owner's close: it ends the exchange as closed. */
  closing?: Closer;
  maxBodyBytes: number;
  agent?: http.Agent | https.Agent;
}

/**
 * Ends every exchange in flight when its owner closes. Each exchange registers a callback in a set
 * rather than a listener on an AbortSignal: adding and removing an event listener costs several
 * times a set entry, once per message. `signal` (aborted on close) serves waits that need one.
 */
export class Closer {
  private readonly controller = new AbortController();
  private readonly stops = new Set<() => void>();

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  close(): void {
    if (this.closed) return;
    this.controller.abort();
    for (const stop of this.stops) stop();
    this.stops.clear();
  }

  track(stop: () => void): void {
    this.stops.add(stop);
  }

  untrack(stop: () => void): void {
    this.stops.delete(stop);
  }
}

/**
 * Where requests to one endpoint go, as `http.request` options: computed once per endpoint, so a
 * message does not convert the URL again.
 */
export interface Target {
  url: URL;
  where: string;
  lib: typeof http | typeof https;
  options: http.RequestOptions;
}

export function target(url: URL): Target {
  return {
    url,
    where: safeUrl(url),
    lib: url.protocol === 'https:' ? https : http,
    options: {
      protocol: url.protocol,
      hostname: bareHost(url.hostname),
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
    },
  };
}

/** A URL's host without the brackets of an IPv6 literal, as `node:http` and `isIP` take it. */
function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '');
}

/** True for `localhost`, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/** The URL without credentials, query or fragment: safe for logs and error details. */
export function safeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * Parses and checks an endpoint: https anywhere, http only to loopback (or when explicitly allowed),
 * never user:password in the URL (that would be a literal credential). `pointer` is where the URL
 * sits in the registration (e.g. `/hooks/0/transport/url`); errors then carry it in their detail
 * and name it in their message. `field` names the URL's role when there is no pointer.
 */
export function checkEndpoint(
  raw: string,
  allowInsecureHttp = false,
  where: { pointer?: string; field?: string } = {},
): URL {
  const field = where.field ?? 'url';
  const pointer = where.pointer;
  const context = pointer !== undefined ? { field, pointer } : { field };
  const at = pointer !== undefined ? ` (${pointer})` : '';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TransportError('transport', `endpoint${at} is not an absolute URL`, context);
  }
  if (url.username !== '' || url.password !== '') {
    throw new TransportError(
      'auth',
      `endpoint ${safeUrl(url)}${at} carries credentials in the URL; use an authentication reference`,
      context,
    );
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && (isLoopbackHost(url.hostname) || allowInsecureHttp)) return url;
  throw new TransportError(
    'transport',
    `endpoint ${safeUrl(url)}${at} must use https (plain http is allowed only to a loopback address)`,
    { ...context, url: safeUrl(url) },
  );
}

/** Media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function exchange(to: URL | Target, options: ExchangeOptions): Promise<HttpResponse> {
  const { where, lib, options: base } = to instanceof URL ? target(to) : to;
  const { signal, closing } = options;
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal.aborted || closing?.closed) {
      const code = closing?.closed ? 'closed' : 'timeout';
      reject(new TransportError(code, `aborted before contacting ${where}`, { url: where }));
      return;
    }
    let settled = false;
    const finish = (error: TransportError | undefined, value?: HttpResponse) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onTimeout);
      closing?.untrack(onClose);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(value!);
    };
    const onTimeout = () =>
      finish(new TransportError('timeout', `deadline reached talking to ${where}`, { url: where }));
    const onClose = () => finish(new TransportError('closed', 'transport closed', { url: where }));
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(options.body.length);
    const req = lib.request({ ...base, method: options.method, headers, agent: options.agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBodyBytes) {
        res.resume();
        finish(tooLarge(where, options.maxBodyBytes));
        return;
      }
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBodyBytes) {
          finish(tooLarge(where, options.maxBodyBytes));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        finish(undefined, {
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
        }),
      );
      res.on('error', () =>
        finish(
          new TransportError('transport', `connection to ${where} lost while reading the response`, {
            url: where,
          }),
        ),
      );
      res.on('aborted', () =>
        finish(new TransportError('transport', `connection to ${where} closed mid-response`, { url: where })),
      );
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      finish(
        new TransportError('transport', `cannot reach ${where}: ${error.code ?? 'connection failed'}`, {
          url: where,
          errno: error.code,
        }),
      );
    });
    signal.addEventListener('abort', onTimeout, { once: true });
    closing?.track(onClose);
    req.end(options.body);
  });
}

function tooLarge(where: string, limit: number): TransportError {
  return new TransportError('too-large', `response from ${where} exceeds ${limit} bytes`, {
    url: where,
    limit,
  });
}
