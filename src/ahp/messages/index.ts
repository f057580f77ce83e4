/**
 * Tally's validator for AHP wire messages. Hand-written structural checks (no schema files are
 * loaded at runtime) plus the rules a schema cannot express: request id equal to event id, URI
 * syntax of `source`, RFC 3339 `time`, advertised-capability limits and contextual edits.
 * Every function returns `Issue[]`; an empty list means valid.
 */
import { isJsonObject } from '../../core/json.js';
import type { Issue } from '../registration/types.js';
import { eventCheck } from './events.js';
import {
  capabilitiesRequest,
  capabilitiesResponse,
  errorResponse,
  interceptRequest,
  interceptResponse,
  observeNotification,
} from './jsonrpc.js';
import { type Check, collect, issue } from './shape.js';

export { type InterceptRequestContext, validateInterceptResponse } from './contextual.js';
export { VALIDATED_EVENT_TYPES, validateEvent } from './events.js';
export { isAbsoluteUri, isRfc3339DateTime } from './formats.js';
export { FramingError, type FramingErrorCode, parseStdioLine } from './stdio.js';
export type { Issue };

export type MessageKind =
  | 'intercept-request'
  | 'intercept-response'
  | 'observe-notification'
  | 'capabilities-request'
  | 'capabilities-response'
  | 'error-response'
  | 'event';

const CHECKS: Record<MessageKind, Check> = {
  'intercept-request': interceptRequest,
  'intercept-response': interceptResponse,
  'observe-notification': observeNotification,
  'capabilities-request': capabilitiesRequest,
  'capabilities-response': capabilitiesResponse,
  'error-response': errorResponse,
  event: eventCheck,
};

const METHOD_KINDS: Record<string, MessageKind> = {
  'hooks/intercept': 'intercept-request',
  'hooks/observe': 'observe-notification',
  'hooks/capabilities': 'capabilities-request',
};

/**
 * The kind a wire message claims to be: by `method` for requests and notifications, by `error`
 * or `result` (with `manifest` for discovery) for responses. Undefined when it claims none or an
 * unknown method, or mixes a method with a response member.
 */
export function inferMessageKind(message: unknown): MessageKind | undefined {
  if (!isJsonObject(message)) return undefined;
  if ('method' in message) {
    if ('result' in message || 'error' in message) return undefined;
    return typeof message.method === 'string' && Object.hasOwn(METHOD_KINDS, message.method)
      ? METHOD_KINDS[message.method]
      : undefined;
  }
  if ('error' in message) return 'error-response';
  if ('result' in message)
    return isJsonObject(message.result) && 'manifest' in message.result
      ? 'capabilities-response'
      : 'intercept-response';
  return undefined;
}

/** Validate one wire message, as `kind` or as the kind it claims to be. */
export function validateMessage(message: unknown, kind?: MessageKind): Issue[] {
  const out: Issue[] = [];
  const resolved = kind ?? inferMessageKind(message);
  if (resolved) {
    const check = CHECKS[resolved];
    return collect((into) => check(message, '', into));
  }
  if (!isJsonObject(message)) {
    issue(
      out,
      '',
      'type',
      Array.isArray(message)
        ? 'JSON-RPC batches are not allowed: send one object'
        : 'a message must be a JSON object',
    );
  } else if ('method' in message && ('result' in message || 'error' in message)) {
    issue(
      out,
      '',
      'rpc.ambiguous',
      'a message is either a request/notification (method) or a response (result/error), never both',
    );
  } else if ('method' in message) {
    issue(
      out,
      '/method',
      'rpc.unknown-method',
      `unknown AHP method ${JSON.stringify(message.method)} (expected hooks/intercept, hooks/observe or hooks/capabilities)`,
    );
  } else {
    issue(out, '', 'rpc.not-a-message', 'not a JSON-RPC message: it has no method, result or error');
  }
  return out;
}
