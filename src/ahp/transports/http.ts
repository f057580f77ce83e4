/**
 * The AHP HTTP binding, harness side: each message is a new POST of one JSON-RPC object with
 * `Content-Type: application/json`. An intercept (or capabilities) request succeeds only with 200
 * and an `application/json` body holding one JSON object; a notification succeeds only with 202 or
 * 204. A 401 may start authentication (see ../auth.ts) and the request is retried once; every other
 * status, a redirect included, is an operational failure. One keep-alive agent per backend.
 */
import http from 'node:http';
import https from 'node:https';
import { parseJson } from '../../core/canonical.js';
import type { EndpointAuth } from '../auth.js';
import {
  type BackendTransport,
  type JsonRpcNotification,
  type JsonRpcRequest,
  TransportError,
} from '../transport.js';
import { checkEndpoint, exchange, type HttpResponse, mediaType, safeUrl } from './http-exchange.js';
import { DEFAULT_MAX_BODY_BYTES, type Logger, silentLogger } from './options.js';

export interface HttpTransportOptions {
  backendId: string;
  url: string;
  /** JSON pointer of `url` in the registration (e.g. `/hooks/0/transport/url`), for its errors. */
  pointer?: string;
  auth: EndpointAuth;
  logger?: Logger;
  maxBodyBytes?: number;
  allowInsecureHttp?: boolean;
}

/** Statuses an accepted notification may carry. */
const NOTIFY_OK = new Set([202, 204]);

export class HttpTransport implements BackendTransport {
  private readonly url: URL;
  private readonly where: string;
  private readonly agent: http.Agent;
  private closed = false;
  /** One controller per message in flight: aborted by the caller's signal or by `close()`. */
  private readonly live = new Set<AbortController>();
  private readonly logger: Logger;
  private readonly maxBodyBytes: number;

  constructor(private readonly options: HttpTransportOptions) {
    this.url = checkEndpoint(
      options.url,
      options.allowInsecureHttp,
      options.pointer !== undefined ? { pointer: options.pointer } : {},
    );
    this.where = safeUrl(this.url);
    const agentOptions = { keepAlive: true, maxSockets: 8 };
    this.agent =
      this.url.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.logger = options.logger ?? silentLogger;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  async request(message: JsonRpcRequest, signal: AbortSignal): Promise<unknown> {
    const res = await this.post(message, signal);
    if (res.status !== 200) throw this.statusError(res.status, 'a request');
    const type = mediaType(res.headers['content-type']);
    if (type !== 'application/json') {
      throw new TransportError(
        'content-type',
        `${this.where} answered with content type '${type}', not application/json`,
        {
          url: this.where,
          contentType: type,
        },
      );
    }
    let value: unknown;
    try {
      value = parseJson(res.body);
    } catch (error) {
      throw new TransportError('protocol', `${this.where} answered with a body that is not one JSON value`, {
        url: this.where,
        ...(error instanceof Error && 'detail' in error
          ? { parse: (error as { detail: unknown }).detail }
          : {}),
      });
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new TransportError(
        'protocol',
        `${this.where} answered with ${Array.isArray(value) ? 'a batch' : 'a non-object'}; one JSON-RPC object is required`,
        {
          url: this.where,
        },
      );
    }
    return value;
  }

  async notify(message: JsonRpcNotification, signal: AbortSignal): Promise<void> {
    const res = await this.post(message, signal);
    if (!NOTIFY_OK.has(res.status)) throw this.statusError(res.status, 'a notification');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const link of this.live) link.abort();
    this.agent.destroy();
  }

  private statusError(status: number, what: string): TransportError {
    const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
    return new TransportError('http-status', `${this.where} answered ${status} to ${what}${redirect}`, {
      url: this.where,
      status,
    });
  }

  private async post(
    message: JsonRpcRequest | JsonRpcNotification,
    signal: AbortSignal,
  ): Promise<HttpResponse> {
    if (this.closed) throw new TransportError('closed', `transport to ${this.where} is closed`);
    // The caller's deadline or close() ends the exchange. A listener on the caller's signal and a
    // set of live controllers cost far less per message than AbortSignal.any, whose per-call cost
    // grows with the dependents it keeps on a long-lived source.
    const link = new AbortController();
    const combined = link.signal;
    const onAbort = () => link.abort();
    if (signal.aborted) link.abort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.live.add(link);
    try {
      return await this.exchangeWithAuth(message, combined);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.live.delete(link);
    }
  }

  /** One POST under `combined`, authenticating once on a 401 challenge. */
  private async exchangeWithAuth(
    message: JsonRpcRequest | JsonRpcNotification,
    combined: AbortSignal,
  ): Promise<HttpResponse> {
    const abortCode = () => (this.closed ? ('closed' as const) : ('timeout' as const));
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const send = (authorization: string | undefined) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json',
      };
      if (authorization !== undefined) headers.authorization = authorization;
      return exchange(this.url, {
        method: 'POST',
        headers,
        body,
        signal: combined,
        maxBodyBytes: this.maxBodyBytes,
        agent: this.agent,
        abortCode,
      });
    };
    const guard = <T>(p: Promise<T>) =>
      p.catch((e: unknown) => {
        if (
          combined.aborted &&
          !(e instanceof TransportError && (e.code === 'timeout' || e.code === 'closed'))
        ) {
          throw new TransportError(abortCode(), `deadline reached talking to ${this.where}`, {
            url: this.where,
          });
        }
        throw e;
      });
    const auth = this.options.auth;
    let authorization = auth.anonymous ? undefined : await guard(auth.authorization(combined));
    let res = await send(authorization);
    if (res.status === 401) {
      this.logger('debug', 'endpoint challenged; authenticating', {
        backend: this.options.backendId,
        url: this.where,
      });
      await guard(this.options.auth.challenged(header(res.headers['www-authenticate']), combined));
      authorization = await guard(this.options.auth.authorization(combined));
      res = await send(authorization);
      if (res.status === 401) {
        throw new TransportError('auth', `${this.where} rejected the acquired credential (401)`, {
          url: this.where,
          status: 401,
        });
      }
    }
    if (res.status === 403) {
      throw new TransportError('auth', `${this.where} refused the credential's scope (403)`, {
        url: this.where,
        status: 403,
      });
    }
    return res;
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
