/**
 * The AHP upload binding for non-text attachments: one POST of the raw bytes to the exact
 * configured endpoint (path and query kept, nothing appended, no redirects), with
 * `Content-Type: application/octet-stream`, the exact `Content-Length` and
 * `AHP-Content-SHA256: <lowercase hex>`. Only a 201 with a JSON receipt `{ref, size, sha256}` whose
 * size and digest equal the bytes sent confirms the upload; the caller then publishes only `ref`.
 *
 * The upload endpoint authenticates on its own: its `auth` binding (or, when absent, OAuth
 * protected-resource discovery on that endpoint), never the event endpoint's credential. Its
 * budget is the binding's own `timeoutMs` (further bounded by the caller's signal), and bytes
 * over `maxBytes` are refused before any connection, never truncated.
 */

import { parseJson } from '../../core/canonical.js';
import { TallyError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hash.js';
import { effectiveTimeout } from '../protocol/capabilities.js';
import { pointerTo } from '../registration/check.js';
import type { UploadBinding } from '../registration/types.js';
import { EndpointAuth } from './auth.js';
import { checkEndpoint, exchange, mediaType, safeUrl } from './http-exchange.js';
import type { OAuthClientPolicy } from './options.js';
import type { SecretProvider } from './secrets.js';
import { TransportError } from './transport.js';

export type UploadErrorCode =
  | 'too-large' // the bytes exceed maxBytes (nothing was sent) or the receiver said 413
  | 'timeout' // the upload budget or the caller's signal ran out
  | 'transport' // connection failed
  | 'auth' // credential resolution or acquisition failed, 401, 403
  | 'http-status' // any status but 201 (400, 404, 202, 204, ...)
  | 'receipt'; // the 201 body is not a receipt, or its size/sha256 differ from the bytes sent

export class UploadError extends TallyError<UploadErrorCode> {}

export interface UploadReceipt {
  ref: string;
  size: number;
  sha256: string;
}

export interface UploaderOptions {
  secrets: SecretProvider;
  env: NodeJS.ProcessEnv;
  oauthClients?: OAuthClientPolicy;
  allowInsecureHttp?: boolean;
  /**
   * JSON pointer of this binding in the registration (e.g. `/hooks/0/subscriptions/1/upload`).
   * Configuration errors then carry `pointer` (`…/upload/endpoint`, `…/upload/auth/tokenRef`) in
   * their detail; without it they name only the field.
   */
  pointer?: string;
}

const RECEIPT_LIMIT = 64 * 1024;
const SHA256_HEX = /^[a-f0-9]{64}$/;

/** One uploader per upload binding: its own endpoint authentication and token cache. */
export class Uploader {
  private readonly url: URL;
  private readonly where: string;
  private readonly auth: EndpointAuth;

  constructor(
    private readonly binding: UploadBinding,
    options: UploaderOptions,
  ) {
    const base = options.pointer;
    try {
      this.url = checkEndpoint(binding.endpoint, options.allowInsecureHttp, {
        field: 'upload.endpoint',
        ...(base !== undefined ? { pointer: pointerTo(base, 'endpoint') } : {}),
      });
    } catch (error) {
      throw new UploadError('transport', (error as Error).message, (error as TransportError).detail);
    }
    this.where = safeUrl(this.url);
    this.auth = new EndpointAuth(this.url, binding.auth, {
      secrets: options.secrets,
      env: options.env,
      oauthClients: options.oauthClients,
      allowInsecureHttp: options.allowInsecureHttp,
      ...(base !== undefined ? { pointer: pointerTo(base, 'auth') } : {}),
    });
  }

  async upload(bytes: Uint8Array, signal?: AbortSignal): Promise<UploadReceipt> {
    if (bytes.length > this.binding.maxBytes) {
      throw new UploadError(
        'too-large',
        `attachment of ${bytes.length} bytes exceeds upload maxBytes ${this.binding.maxBytes}`,
        {
          size: bytes.length,
          maxBytes: this.binding.maxBytes,
        },
      );
    }
    const budget = AbortSignal.timeout(effectiveTimeout(this.binding.timeoutMs));
    const combined = signal ? AbortSignal.any([signal, budget]) : budget;
    const digest = sha256Hex(bytes);
    const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    try {
      const send = async (authorization: string | undefined) => {
        const headers: Record<string, string> = {
          'content-type': 'application/octet-stream',
          'ahp-content-sha256': digest,
          accept: 'application/json',
        };
        if (authorization !== undefined) headers.authorization = authorization;
        return exchange(this.url, {
          method: 'POST',
          headers,
          body,
          signal: combined,
          maxBodyBytes: RECEIPT_LIMIT,
        });
      };
      let res = await send(await this.auth.authorization(combined));
      if (res.status === 401) {
        await this.auth.challenged(header(res.headers['www-authenticate']), combined);
        res = await send(await this.auth.authorization(combined));
      }
      return this.receipt(res.status, res.headers['content-type'], res.body, bytes.length, digest);
    } catch (error) {
      if (error instanceof UploadError) throw error;
      if (combined.aborted)
        throw new UploadError('timeout', `upload to ${this.where} ran out of time`, { url: this.where });
      if (error instanceof TransportError) {
        const code = error.code === 'too-large' ? 'receipt' : error.code === 'auth' ? 'auth' : 'transport';
        throw new UploadError(code, error.message, error.detail);
      }
      throw error;
    }
  }

  private receipt(
    status: number,
    type: string | undefined,
    body: Buffer,
    size: number,
    digest: string,
  ): UploadReceipt {
    if (status === 401 || status === 403) {
      throw new UploadError('auth', `upload endpoint ${this.where} refused the credential (${status})`, {
        url: this.where,
        status,
      });
    }
    if (status === 413) {
      throw new UploadError(
        'too-large',
        `upload endpoint ${this.where} refused ${size} bytes as too large (413)`,
        { url: this.where, status },
      );
    }
    if (status !== 201) {
      throw new UploadError(
        'http-status',
        `upload endpoint ${this.where} answered ${status}; only 201 confirms an upload`,
        {
          url: this.where,
          status,
        },
      );
    }
    if (mediaType(type) !== 'application/json') {
      throw new UploadError('receipt', `upload receipt from ${this.where} is not application/json`, {
        url: this.where,
      });
    }
    let value: unknown;
    try {
      value = parseJson(body);
    } catch {
      throw new UploadError('receipt', `upload receipt from ${this.where} is not JSON`, { url: this.where });
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new UploadError('receipt', `upload receipt from ${this.where} is not an object`, { pointer: '' });
    }
    const r = value as Record<string, unknown>;
    for (const key of Object.keys(r)) {
      if (!['ref', 'size', 'sha256'].includes(key))
        throw new UploadError('receipt', `upload receipt has unknown field ${key}`, { pointer: `/${key}` });
    }
    if (typeof r.ref !== 'string' || r.ref === '')
      throw new UploadError('receipt', 'upload receipt ref must be a non-empty string', { pointer: '/ref' });
    if (r.size !== size) {
      throw new UploadError(
        'receipt',
        `upload receipt size ${JSON.stringify(r.size)} differs from the ${size} bytes sent`,
        { pointer: '/size' },
      );
    }
    if (typeof r.sha256 !== 'string' || !SHA256_HEX.test(r.sha256) || r.sha256 !== digest) {
      throw new UploadError('receipt', 'upload receipt sha256 differs from the digest of the bytes sent', {
        pointer: '/sha256',
      });
    }
    return { ref: r.ref, size, sha256: digest };
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
