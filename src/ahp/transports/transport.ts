/**
 * The small interface between the dispatcher and a backend connection. One file per transport
 * implements it (`transports/stdio.ts`, `transports/http.ts`, `transports/memory.ts`); the dispatcher
 * knows nothing else about how bytes move.
 */
import { TallyError } from '../../core/errors.js';

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: unknown;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}

export type TransportErrorCode =
  | 'timeout' // the deadline (signal) fired before an answer
  | 'transport' // connect refused, socket closed, process exited, write failed
  | 'auth' // credential missing/unresolvable, 401/403, OAuth failure
  | 'http-status' // a status the spec does not accept for this message
  | 'content-type' // a body that is not application/json where JSON is required
  | 'too-large' // a body over the configured limit
  | 'protocol' // bytes that are not one JSON-RPC message (garbage, two answers, bad framing)
  | 'closed'; // the transport was closed by the harness

export class TransportError extends TallyError<TransportErrorCode> {}

export interface BackendTransport {
  /**
   * Sends one JSON-RPC request and resolves with the parsed JSON answer (a JSON-RPC response
   * object, not yet validated). Rejects with TransportError on any operational failure. Must
   * settle promptly once `signal` aborts (the subscription deadline, covering connect and auth).
   */
  request(message: JsonRpcRequest, signal: AbortSignal): Promise<unknown>;
  /** Delivers one notification (observe). Resolves when delivered; rejects with TransportError. */
  notify(message: JsonRpcNotification, signal: AbortSignal): Promise<void>;
  /** Releases processes and sockets. Idempotent. */
  close(): Promise<void>;
}
