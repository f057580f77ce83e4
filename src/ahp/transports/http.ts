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
import type { EndpointAuth } from './auth.js';
import {
  Closer,
  checkEndpoint,
  exchange,
  type HttpResponse,
  mediaType,
  type Target,
  target,
} from './http-exchange.js';
import { DEFAULT_MAX_BODY_BYTES, type Logger, silentLogger } from './options.js';
import {
  type BackendTransport,
  type JsonRpcNotification,
  type JsonRpcRequest,
  TransportError,
} from './transport.js';

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
  private readonly target: Target;
  private readonly where: string;
  private readonly agent: http.Agent;
  /** Closed by `close()`: every message in flight then ends as closed. */
  private readonly closing = new Closer();
  private readonly logger: Logger;
  private readonly maxBodyBytes: number;

  constructor(private readonly options: HttpTransportOptions) {
    const url = checkEndpoint(
      options.url,
      options.allowInsecureHttp,
      options.pointer !== undefined ? { pointer: options.pointer } : {},
    );
    this.target = target(url);
    this.where = this.target.where;
    const agentOptions = { keepAlive: true, maxSockets: 8 };
    this.agent = url.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
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
    if (this.closing.closed) return;
    this.closing.close();
    this.agent.destroy();
  }

  private statusError(status: number, what: string): TransportError {
    const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
    return new TransportError('http-status', `${this.where} answered ${status} to ${what}${redirect}`, {
      url: this.where,
      status,
    });
  }

  /**
   * One POST under the caller's deadline and this transport's close, authenticating once on a 401
   * challenge. Both reach the exchange directly (no controller per message); a signal combining
   * them is made only when authentication needs one.
   */
  private async post(
    message: JsonRpcRequest | JsonRpcNotification,
    signal: AbortSignal,
  ): Promise<HttpResponse> {
    const closing = this.closing;
    if (closing.closed) throw new TransportError('closed', `transport to ${this.where} is closed`);
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const send = (authorization: string | undefined) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json',
      };
      if (authorization !== undefined) headers.authorization = authorization;
      return exchange(this.target, {
        method: 'POST',
        headers,
        body,
        signal,
        closing,
        maxBodyBytes: this.maxBodyBytes,
        agent: this.agent,
      });
    };
    const auth = this.options.auth;
    // The common case, nothing to authenticate with: no signal to combine unless challenged.
    let first: HttpResponse | undefined;
    if (auth.anonymous) {
      first = await send(undefined);
      if (first.status !== 401) return this.checkAuthStatus(first);
    }
    // A bearer credential is resolved locally and a challenge ends the call, so the caller's
    // deadline is all its steps need; discovery and OAuth talk to other endpoints and must also
    // end on close().
    const link = auth.bindingKind === 'bearer' ? undefined : linked(signal, closing.signal);
    const authSignal = link?.signal ?? signal;
    const guard = <T>(p: Promise<T>) =>
      p.catch((e: unknown) => {
        if (
          authSignal.aborted &&
          !(e instanceof TransportError && (e.code === 'timeout' || e.code === 'closed'))
        ) {
          throw new TransportError(
            closing.closed ? 'closed' : 'timeout',
            `deadline reached talking to ${this.where}`,
            { url: this.where },
          );
        }
        throw e;
      });
    try {
      let res = first ?? (await send(await guard(auth.authorization(authSignal))));
      if (res.status === 401) {
        this.logger('debug', 'endpoint challenged; authenticating', {
          backend: this.options.backendId,
          url: this.where,
        });
        await guard(auth.challenged(header(res.headers['www-authenticate']), authSignal));
        res = await send(await guard(auth.authorization(authSignal)));
        if (res.status === 401) {
          throw new TransportError('auth', `${this.where} rejected the acquired credential (401)`, {
            url: this.where,
            status: 401,
          });
        }
      }
      return this.checkAuthStatus(res);
    } finally {
      link?.release();
    }
  }

  /** A 403 is an authorisation failure whatever the message. */
  private checkAuthStatus(res: HttpResponse): HttpResponse {
    if (res.status === 403) {
      throw new TransportError('auth', `${this.where} refused the credential's scope (403)`, {
        url: this.where,
        status: 403,
      });
    }
    return res;
  }
}

/**
 * A signal aborted by either source, for the authentication steps; `release` removes its
 * listeners. Cheaper than AbortSignal.any, whose cost grows with the dependents a long-lived
 * source keeps.
 */
function linked(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; release: () => void } {
  const link = new AbortController();
  const onAbort = () => link.abort();
  if (a.aborted || b.aborted) link.abort();
  a.addEventListener('abort', onAbort, { once: true });
  b.addEventListener('abort', onAbort, { once: true });
  return {
    signal: link.signal,
    release() {
      a.removeEventListener('abort', onAbort);
      b.removeEventListener('abort', onAbort);
    },
  };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
