/**
 * Endpoint authentication for AHP HTTP calls (events and uploads alike), one instance per endpoint
 * so a credential is never reused for another endpoint.
 *
 * - Explicit `bearer`: the token comes from `tokenEnv` (an environment variable) or `tokenRef` (the
 *   secret provider). If it cannot be resolved nothing is sent; a rejection is final. An explicit
 *   binding never falls back to OAuth discovery or to anonymous delivery.
 * - Explicit `oauth` preset (`client_credentials`): authorization server metadata (RFC 8414, then
 *   OpenID discovery) from the configured issuer, then a client-credentials token request bound to
 *   the configured resource (RFC 8707), client secret from the secret provider.
 * - No binding: the first attempt carries no credential. On a 401, protected-resource metadata is
 *   discovered (RFC 9728: `WWW-Authenticate: Bearer resource_metadata=…`, else the well-known paths,
 *   endpoint-specific first, then the origin root), its `resource` is checked against the endpoint,
 *   the local OAuth client policy picks one of the listed authorization servers, and a
 *   client-credentials token is requested for that resource.
 *
 * Every step runs under the caller's AbortSignal. Error messages and details carry field names,
 * registration pointers, URLs without query, statuses and OAuth error codes; never a token or a
 * client secret, and never the value of tokenEnv, tokenRef or clientSecretRef either (a credential
 * pasted there by mistake must not be repeated on stderr).
 */

import { parseJson } from '../../core/canonical.js';
import { isJsonObject } from '../../core/json.js';
import { pointerTo } from '../registration/check.js';
import type { Authentication, OAuthPreset } from '../registration/types.js';
import { checkEndpoint, exchange, mediaType, safeUrl } from './http-exchange.js';
import type { OAuthClientChoice, OAuthClientPolicy } from './options.js';
import { SecretError, type SecretErrorCode, type SecretProvider } from './secrets.js';
import { TransportError } from './transport.js';

export interface EndpointAuthOptions {
  secrets: SecretProvider;
  env: NodeJS.ProcessEnv;
  oauthClients?: OAuthClientPolicy;
  allowInsecureHttp?: boolean;
  /** Bound on discovery and token responses. */
  maxBodyBytes?: number;
  /**
   * JSON pointer of the binding in the registration (e.g. `/hooks/0/authentication` or
   * `/hooks/0/subscriptions/1/upload/auth`); configuration errors then carry
   * `pointer: <binding>/<field>` in their detail and name it in their message.
   */
  pointer?: string;
}

/** Said of a secret the provider could not resolve when its own message cannot be repeated. */
const SECRET_FAULTS: Record<SecretErrorCode, string> = {
  'bad-ref': 'the reference is not one the secret provider accepts',
  missing: 'no such secret',
  mode: 'the secret file is readable by others than its owner',
  'not-file': 'the secret is not a regular file',
  empty: 'the secret is empty',
  unreadable: 'the secret cannot be read',
};

interface CachedToken {
  value: string;
  /** ms since epoch; Infinity when the server gave no lifetime. */
  expiresAt: number;
}

const METADATA_LIMIT = 256 * 1024;

/** Parameters of the `Bearer` challenge in a WWW-Authenticate header (RFC 9110 §11.6.1 auth-params). */
export function parseBearerChallenge(header: string | undefined): Record<string, string> | undefined {
  if (header === undefined) return undefined;
  const re = /(?:^|,)\s*Bearer(?:\s+|$)((?:\s*,?\s*[A-Za-z0-9_.-]+\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^\s,"]*))*)/i;
  const match = re.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  const paramRe = /([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))/g;
  for (const m of (match[1] ?? '').matchAll(paramRe)) {
    const key = m[1]!.toLowerCase();
    params[key] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
  }
  return params;
}

/** RFC 8414 §3 / OpenID discovery URLs for an issuer, in the order MCP 2025-11-25 prescribes. */
export function authorizationServerMetadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/$/, '');
  if (path === '') {
    return [
      new URL('/.well-known/oauth-authorization-server', issuer.origin),
      new URL('/.well-known/openid-configuration', issuer.origin),
    ];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, issuer.origin),
    new URL(`/.well-known/openid-configuration${path}`, issuer.origin),
    new URL(`${path}/.well-known/openid-configuration`, issuer.origin),
  ];
}

/** RFC 9728 §3 well-known URLs for an endpoint: endpoint-specific first, then the origin root. */
export function protectedResourceMetadataUrls(endpoint: URL): { url: URL; resource: string[] }[] {
  const path = endpoint.pathname.replace(/\/$/, '');
  const out: { url: URL; resource: string[] }[] = [];
  if (path !== '') {
    out.push({
      url: new URL(`/.well-known/oauth-protected-resource${path}`, endpoint.origin),
      resource: [`${endpoint.origin}${endpoint.pathname}`],
    });
  }
  out.push({
    url: new URL('/.well-known/oauth-protected-resource', endpoint.origin),
    resource: [endpoint.origin, `${endpoint.origin}/`],
  });
  return out;
}

function authError(message: string, detail?: Record<string, unknown>): TransportError {
  return new TransportError('auth', message, detail);
}

export class EndpointAuth {
  private token: CachedToken | undefined;
  private readonly where: string;

  constructor(
    private readonly endpoint: URL,
    private readonly binding: Authentication | undefined,
    private readonly options: EndpointAuthOptions,
  ) {
    this.where = safeUrl(endpoint);
  }

  /** 'bearer', 'oauth', or 'none' when the endpoint has no explicit binding. */
  get bindingKind(): 'bearer' | 'oauth' | 'none' {
    return this.binding?.type ?? 'none';
  }

  /** True while `authorization()` would answer "no credential" without any work: no binding, no token. */
  get anonymous(): boolean {
    return this.binding === undefined && this.token === undefined;
  }

  /** The Authorization header value for the next attempt; undefined when none is held yet. */
  async authorization(signal: AbortSignal): Promise<string | undefined> {
    const binding = this.binding;
    if (binding?.type === 'bearer') return `Bearer ${await this.resolveBearer(binding)}`;
    if (binding?.type === 'oauth' && !this.valid())
      await this.acquireOnce(signal, () => this.presetToken(binding, signal));
    return this.valid() ? `Bearer ${this.token!.value}` : undefined;
  }

  /**
   * Handles a 401. Resolves when a fresh credential is ready and the request should be retried
   * (the caller retries at most once per request); rejects when there is nothing to retry with.
   */
  async challenged(wwwAuthenticate: string | undefined, signal: AbortSignal): Promise<void> {
    const binding = this.binding;
    if (binding?.type === 'bearer') {
      const pointer = this.options.pointer;
      throw authError(`${this.where} rejected the configured bearer credential (401)`, {
        url: this.where,
        status: 401,
        ...(pointer !== undefined ? { pointer } : {}),
      });
    }
    this.token = undefined;
    if (binding?.type === 'oauth') await this.acquireOnce(signal, () => this.presetToken(binding, signal));
    else await this.acquireOnce(signal, () => this.discover(wwwAuthenticate, signal));
  }

  private valid(): boolean {
    return this.token !== undefined && this.token.expiresAt > Date.now();
  }

  private async acquireOnce(signal: AbortSignal, run: () => Promise<void>): Promise<void> {
    await abortable(run(), signal, this.where);
  }

  /** Where a binding field sits in the registration: detail fields and a message suffix. */
  private field(field: string): { detail: Record<string, unknown>; at: string } {
    const base = this.options.pointer;
    if (base === undefined) return { detail: { field }, at: '' };
    const pointer = pointerTo(base, field);
    return { detail: { field, pointer }, at: ` (${pointer})` };
  }

  private async resolveBearer(
    binding: { type: 'bearer'; tokenEnv: string } | { type: 'bearer'; tokenRef: string },
  ) {
    if ('tokenEnv' in binding) {
      const value = this.options.env[binding.tokenEnv];
      if (value === undefined || value === '') {
        const { detail, at } = this.field('tokenEnv');
        throw authError(
          `the bearer token variable named by tokenEnv${at} is not set; nothing was sent to ${this.where}`,
          detail,
        );
      }
      return value;
    }
    return this.resolveRef(binding.tokenRef, 'tokenRef', true);
  }

  /**
   * Resolves a secret reference. `fromBinding`: the reference is the binding's own field (so its
   * pointer applies), not one chosen by the local OAuth client policy. Neither the reference nor a
   * provider message that repeats it reaches the error.
   */
  private async resolveRef(ref: string, field: string, fromBinding: boolean): Promise<string> {
    try {
      return await this.options.secrets.resolve(ref);
    } catch (error) {
      const code = error instanceof SecretError ? error.code : undefined;
      const reason =
        code === undefined
          ? 'the secret provider failed'
          : error instanceof SecretError && !error.message.includes(ref)
            ? error.message
            : SECRET_FAULTS[code];
      const { detail, at } = fromBinding
        ? this.field(field)
        : { detail: { field, source: 'oauthClients' }, at: ' (chosen by the local OAuth client policy)' };
      throw authError(
        `the secret named by ${field}${at} cannot be resolved: ${reason}; nothing was sent to ${this.where}`,
        { ...detail, secretError: code },
      );
    }
  }

  private async presetToken(preset: OAuthPreset, signal: AbortSignal): Promise<void> {
    if (preset.flow !== 'client_credentials') {
      const { detail, at } = this.field('flow');
      throw authError(
        `OAuth flow '${preset.flow}'${at} needs an interactive user; only client_credentials is supported`,
        { ...detail, flow: preset.flow },
      );
    }
    if (preset.clientSecretRef === undefined) {
      const { detail, at } = this.field('clientSecretRef');
      throw authError(`OAuth preset for ${this.where} has no clientSecretRef${at}`, detail);
    }
    const choice: OAuthClientChoice = {
      issuer: preset.issuer,
      clientId: preset.clientId,
      clientSecretRef: preset.clientSecretRef,
      scopes: preset.scopes,
    };
    this.token = await this.clientCredentials(choice, preset.resource, signal, true);
  }

  private async discover(header: string | undefined, signal: AbortSignal): Promise<void> {
    const candidates = [] as { url: URL; resource: string[] }[];
    const fromHeader = parseBearerChallenge(header)?.resource_metadata;
    if (fromHeader !== undefined) {
      candidates.push({
        url: this.checked(fromHeader, 'resource_metadata'),
        resource: [`${this.endpoint.origin}${this.endpoint.pathname}`],
      });
    } else candidates.push(...protectedResourceMetadataUrls(this.endpoint));
    let metadata: Record<string, unknown> | undefined;
    let expected: string[] = [];
    for (const candidate of candidates) {
      metadata = await this.getJson(candidate.url, signal, 'protected resource metadata');
      if (metadata !== undefined) {
        expected = candidate.resource;
        break;
      }
    }
    if (metadata === undefined) {
      throw authError(`${this.where} requires authentication and publishes no protected resource metadata`, {
        url: this.where,
      });
    }
    const resource = metadata.resource;
    if (typeof resource !== 'string' || !expected.includes(resource)) {
      throw authError(
        `protected resource metadata names resource ${JSON.stringify(resource)}, not ${expected[0]}`,
        {
          field: 'resource',
          expected: expected[0],
        },
      );
    }
    const servers = metadata.authorization_servers;
    if (!Array.isArray(servers) || servers.length === 0 || !servers.every((s) => typeof s === 'string')) {
      throw authError(`protected resource metadata for ${this.where} lists no authorization_servers`, {
        field: 'authorization_servers',
      });
    }
    const choice = this.options.oauthClients?.(resource, servers as string[]);
    if (choice === undefined || !(servers as string[]).includes(choice.issuer)) {
      throw authError(`no local OAuth client is trusted for ${resource} with issuers ${servers.join(', ')}`, {
        resource,
        authorizationServers: servers,
      });
    }
    this.token = await this.clientCredentials(choice, resource, signal, false);
  }

  private checked(raw: string, field: string): URL {
    try {
      return checkEndpoint(raw, this.options.allowInsecureHttp);
    } catch (error) {
      throw authError(`discovered ${field} is not an acceptable URL: ${(error as Error).message}`, { field });
    }
  }

  /** GET a JSON object; undefined on 404 (try the next candidate); error otherwise. */
  private async getJson(
    url: URL,
    signal: AbortSignal,
    what: string,
  ): Promise<Record<string, unknown> | undefined> {
    const res = await exchange(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal,
      maxBodyBytes: this.options.maxBodyBytes ?? METADATA_LIMIT,
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200 || mediaType(res.headers['content-type']) !== 'application/json') {
      throw authError(`${what} at ${safeUrl(url)} answered ${res.status}`, {
        url: safeUrl(url),
        status: res.status,
      });
    }
    const parsed = parseObject(res.body);
    if (parsed === undefined)
      throw authError(`${what} at ${safeUrl(url)} is not a JSON object`, { url: safeUrl(url) });
    return parsed;
  }

  private async clientCredentials(
    choice: OAuthClientChoice,
    resource: string,
    signal: AbortSignal,
    fromBinding: boolean,
  ): Promise<CachedToken> {
    const issuer = this.checked(choice.issuer, 'issuer');
    let metadata: Record<string, unknown> | undefined;
    for (const url of authorizationServerMetadataUrls(issuer)) {
      metadata = await this.getJson(url, signal, 'authorization server metadata');
      if (metadata !== undefined) break;
    }
    if (metadata === undefined)
      throw authError(`issuer ${safeUrl(issuer)} publishes no metadata`, { issuer: safeUrl(issuer) });
    if (metadata.issuer !== choice.issuer) {
      throw authError(
        `authorization server metadata names issuer ${JSON.stringify(metadata.issuer)}, not ${choice.issuer}`,
        {
          field: 'issuer',
        },
      );
    }
    const grants = metadata.grant_types_supported;
    if (Array.isArray(grants) && !grants.includes('client_credentials')) {
      throw authError(`issuer ${choice.issuer} does not support client_credentials`, {
        issuer: choice.issuer,
      });
    }
    if (typeof metadata.token_endpoint !== 'string') {
      throw authError(`issuer ${choice.issuer} metadata has no token_endpoint`, { field: 'token_endpoint' });
    }
    const tokenUrl = this.checked(metadata.token_endpoint, 'token_endpoint');
    const secret = await this.resolveRef(choice.clientSecretRef, 'clientSecretRef', fromBinding);
    const form = new URLSearchParams({ grant_type: 'client_credentials', resource });
    if (choice.scopes !== undefined && choice.scopes.length > 0) form.set('scope', choice.scopes.join(' '));
    // RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding.
    const basic = Buffer.from(`${formEncode(choice.clientId)}:${formEncode(secret)}`).toString('base64');
    const res = await exchange(tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${basic}`,
      },
      body: Buffer.from(form.toString()),
      signal,
      maxBodyBytes: METADATA_LIMIT,
    });
    const body = parseObject(res.body);
    if (res.status !== 200) {
      const code =
        typeof body?.error === 'string' && /^[\x21-\x7e]{1,64}$/.test(body.error) ? body.error : undefined;
      throw authError(
        `token endpoint ${safeUrl(tokenUrl)} refused the client credentials (${res.status}${code ? ` ${code}` : ''})`,
        {
          url: safeUrl(tokenUrl),
          status: res.status,
          error: code,
        },
      );
    }
    const value = body?.access_token;
    const type = body?.token_type;
    if (
      typeof value !== 'string' ||
      value === '' ||
      typeof type !== 'string' ||
      type.toLowerCase() !== 'bearer'
    ) {
      throw authError(`token endpoint ${safeUrl(tokenUrl)} returned no bearer access_token`, {
        url: safeUrl(tokenUrl),
      });
    }
    const lifetime = body?.expires_in;
    const expiresAt =
      typeof lifetime === 'number' && lifetime > 0 ? Date.now() + lifetime * 1000 - 5000 : Infinity;
    return { value, expiresAt };
  }
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

function parseObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    // Strict: a metadata or token document with duplicate keys has no single meaning.
    const value: unknown = parseJson(body);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Waits for `promise`, but settles with a timeout error as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal, where: string): Promise<T> {
  if (signal.aborted)
    return Promise.reject(new TransportError('timeout', `deadline reached authenticating to ${where}`));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(new TransportError('timeout', `deadline reached authenticating to ${where}`, { url: where }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
