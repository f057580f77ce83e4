/**
 * Every refusal the hub answers with: a closed set of codes, each with its HTTP status, written as
 * `{error: {code, message, check?, detail?}}`. `check` names the verifier check that failed.
 */
import type { ServerResponse } from 'node:http';
import { TallyError } from '../../core/errors.js';
import type { HubErrorBody } from '../../hub-client/wire.js';

export const HUB_ERRORS = {
  'not-found': 404,
  'method-not-allowed': 405,
  'bad-request': 400,
  'bad-json': 400,
  'too-deep': 400,
  'body-too-large': 413,
  'unsupported-media-type': 415,
  unauthenticated: 401,
  'bad-signature': 401,
  'unknown-key': 401,
  replayed: 401,
  'stale-signature': 401,
  'digest-mismatch': 400,
  'rate-limited': 429,
  forbidden: 403,
  conflict: 409,
  'verification-failed': 422,
  'fetch-refused': 422,
  unavailable: 503,
  internal: 500,
} as const;

export type HubErrorCode = keyof typeof HUB_ERRORS;

export class HubHttpError extends TallyError<HubErrorCode> {
  readonly check: string | undefined;
  constructor(
    code: HubErrorCode,
    message: string,
    options: { check?: string; detail?: Record<string, unknown> } = {},
  ) {
    super(code, message, options.detail);
    this.check = options.check;
  }
  get status(): number {
    return HUB_ERRORS[this.code];
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  error: HubHttpError,
  headers: Record<string, string> = {},
): void {
  const body: HubErrorBody = {
    error: {
      code: error.code,
      message: error.message,
      ...(error.check ? { check: error.check } : {}),
      ...(error.detail ? { detail: error.detail } : {}),
    },
  };
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, body, headers);
}
