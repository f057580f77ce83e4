/**
 * The two floors the transport rows are read against, besides the raw echo: both sides of an
 * intercept exchange doing only what every implementation must, for scale.
 * - minimal: JSON.parse and JSON.stringify only, the id checked; no validation, no strictness.
 * - required: what the protocol asks of every conforming pair and nothing else: the request
 *   validated before it is sent and after it is read strictly, the answer likewise.
 * The backend side serves the HTTP floors in the benchmark's process and the stdio floors in a
 * child (./programs/ahp-floor-backend.ts).
 */
import {
  type InterceptRequestContext,
  validateInterceptResponse,
  validateMessage,
} from '../src/ahp/messages/index.js';
import type { JsonRpcRequest } from '../src/ahp/transports/transport.js';
import { parseJson } from '../src/core/json-parse.js';

export type FloorKind = 'minimal' | 'required';

const EMPTY_ANSWER = { protocolVersion: 'draft', effects: [] };

/** The bytes of one message without a trailing newline (a stdio line as read). */
function body(bytes: Buffer): Buffer {
  return bytes[bytes.length - 1] === 0x0a ? bytes.subarray(0, bytes.length - 1) : bytes;
}

/** The harness side of a floor: the text to send, and the check of the answer's bytes. */
export function floorClient(kind: FloorKind): {
  send(message: JsonRpcRequest): string;
  receive(bytes: Buffer, message: JsonRpcRequest): void;
} {
  if (kind === 'minimal') {
    return {
      send: (message) => JSON.stringify(message),
      receive(bytes, message) {
        if ((JSON.parse(bytes.toString('utf8')) as { id: unknown }).id !== message.id) {
          throw new Error('the floor answered another id');
        }
      },
    };
  }
  return {
    send(message) {
      if (validateMessage(message, 'intercept-request').length > 0) throw new Error('invalid floor request');
      return JSON.stringify(message);
    },
    receive(bytes, message) {
      const answer = parseJson(body(bytes));
      if (validateInterceptResponse(answer, message as InterceptRequestContext).length > 0) {
        throw new Error('the floor answer is invalid');
      }
    },
  };
}

/** The backend side of a floor: the answer text to one request's bytes. */
export function floorAnswer(kind: FloorKind, bytes: Buffer): string {
  if (kind === 'minimal') {
    const id = (JSON.parse(bytes.toString('utf8')) as { id: unknown }).id;
    return JSON.stringify({ jsonrpc: '2.0', id, result: EMPTY_ANSWER });
  }
  const request = parseJson(body(bytes)) as InterceptRequestContext;
  if (validateMessage(request, 'intercept-request').length > 0) throw new Error('invalid floor request');
  const answer = { jsonrpc: '2.0', id: request.id, result: EMPTY_ANSWER };
  if (validateInterceptResponse(answer, request).length > 0) throw new Error('invalid floor answer');
  return JSON.stringify(answer);
}
