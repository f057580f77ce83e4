/**
 * The hub client's one HTTP exchange (node:http / node:https): optional RFC 9421 signing with the
 * ship key over @method, @target-uri, @authority and content-digest, with created and a random
 * nonce; and the rule for URLs: the hub URL the user typed is used as given (loopback included),
 * while a URL taken from a hub's answer is followed only on the same origin or through the SSRF
 * guard.
 */
import { type KeyObject, randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { contentDigest } from '../core/content-digest.js';
import { TallyError } from '../core/errors.js';
import { signRequest } from '../core/http-signature.js';
import { checkFetchUrl, guardedLookup } from '../core/ssrf.js';
import { type HubErrorBody, signedComponents } from './wire.js';

export type HubClientErrorCode = 'network' | 'refused' | 'bad-answer' | 'hub-key' | 'inconsistent';

export class HubClientError extends TallyError<HubClientErrorCode> {
  readonly status: number | undefined;
  readonly body: HubErrorBody | undefined;
  constructor(
    code: HubClientErrorCode,
    message: string,
    options: { status?: number; body?: HubErrorBody; detail?: Record<string, unknown> } = {},
  ) {
    super(code, message, options.detail);
    this.status = options.status;
    this.body = options.body;
  }
}

export interface ShipKey {
  keyId: string;
  privateKey: KeyObject;
}

export interface HubResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface HubRequest {
  method?: 'GET' | 'PUT' | 'POST';
  body?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Sign the request with this key (every write). */
  signer?: ShipKey;
  /** True for a URL that came from data (a link in an answer): it passes the SSRF guard. */
  untrusted?: boolean;
  timeoutMs?: number;
}

/** Resolves a link from a hub's answer; same-origin links are as trusted as the hub URL itself. */
export function followLink(base: string, link: string): { url: string; untrusted: boolean } {
  const resolved = new URL(link, base);
  if (resolved.origin === new URL(base).origin) return { url: resolved.toString(), untrusted: false };
  return { url: checkFetchUrl(resolved.toString()).toString(), untrusted: true };
}

export function hubUrl(base: string, path: string): string {
  return new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`).toString();
}

export function hubRequest(url: string, options: HubRequest = {}): Promise<HubResponse> {
  const target = options.untrusted ? checkFetchUrl(url) : new URL(url);
  const method = options.method ?? 'GET';
  const body = options.body ?? Buffer.alloc(0);
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.body !== undefined || options.signer) {
    headers['content-type'] = options.contentType ?? 'application/json';
    headers['content-length'] = String(body.length);
  }
  if (options.signer) {
    headers['content-digest'] = contentDigest(body);
    const signed = signRequest(
      { method, url: target.toString(), header: (name) => headers[name] },
      {
        components: signedComponents((name) => headers[name]),
        created: Math.floor(Date.now() / 1000),
        nonce: randomBytes(16).toString('base64url'),
        keyid: options.signer.keyId,
        alg: 'ed25519',
        privateKey: options.signer.privateKey,
      },
    );
    headers['signature-input'] = signed.input;
    headers.signature = signed.signature;
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      target,
      {
        method,
        headers,
        timeout: options.timeoutMs ?? 60_000,
        ...(options.untrusted ? { lookup: guardedLookup as never } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer from ${target.host}`)));
    request.on('error', (error) =>
      reject(new HubClientError('network', `${method} ${target.toString()}: ${error.message}`)),
    );
    request.end(body);
  });
}

/** A JSON answer, or a HubClientError carrying the hub's error body. */
export async function hubJson<T>(
  url: string,
  options: HubRequest = {},
): Promise<{ status: number; json: T }> {
  const response = await hubRequest(url, options);
  let json: unknown;
  try {
    json = JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new HubClientError('bad-answer', `${url} answered ${response.status} with no JSON`, {
      status: response.status,
    });
  }
  if (response.status >= 400) {
    const body = json as HubErrorBody;
    const error = body?.error;
    throw new HubClientError(
      'refused',
      `the hub refused (${response.status} ${error?.code ?? '?'}${error?.check ? `, check ${error.check}` : ''}): ${error?.message ?? ''}`,
      { status: response.status, body },
    );
  }
  return { status: response.status, json: json as T };
}
