/**
 * The in-process transport: a backend handler function answers directly, with no process or
 * socket. Messages still cross a serialisation boundary in both directions (JSON text, parsed
 * strictly), so neither side can share or mutate the other's objects, exactly as on a wire.
 * Used for protocol tests and for backends that live inside the harness process (`in_process`).
 */
import { parseJson } from '../../core/canonical.js';
import {
  type BackendTransport,
  type JsonRpcNotification,
  type JsonRpcRequest,
  TransportError,
} from './transport.js';

/**
 * Answers one message. For a request, return the JSON-RPC response object (any JSON value; it is
 * not checked here). For a notification, the return value is ignored. Throw a TransportError to
 * simulate an operational failure; `signal` aborts at the caller's deadline.
 */
export type MemoryHandler = (
  message: JsonRpcRequest | JsonRpcNotification,
  signal: AbortSignal,
) => unknown | Promise<unknown>;

function wire(value: unknown): unknown {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TransportError('protocol', 'the message is not JSON');
  return parseJson(text);
}

function abortReason(signal: AbortSignal): TransportError {
  return signal.reason instanceof TransportError
    ? signal.reason
    : new TransportError('timeout', 'the deadline passed');
}

export class MemoryTransport implements BackendTransport {
  private closed = false;
  constructor(private readonly handler: MemoryHandler) {}

  private async deliver(
    message: JsonRpcRequest | JsonRpcNotification,
    signal: AbortSignal,
  ): Promise<unknown> {
    if (this.closed) throw new TransportError('closed', 'the transport is closed');
    if (signal.aborted) throw abortReason(signal);
    const sent = wire(message) as JsonRpcRequest | JsonRpcNotification;
    let answered: Promise<unknown>;
    try {
      answered = Promise.resolve(this.handler(sent, signal));
    } catch (error) {
      answered = Promise.reject(error);
    }
    const answer = await new Promise<unknown>((resolve, reject) => {
      const onAbort = () => reject(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      answered.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error instanceof TransportError ? error : new TransportError('transport', String(error)));
        },
      );
    });
    return answer;
  }

  async request(message: JsonRpcRequest, signal: AbortSignal): Promise<unknown> {
    const answer = await this.deliver(message, signal);
    if (answer === undefined) throw new TransportError('protocol', 'the backend sent no answer');
    return wire(answer);
  }

  async notify(message: JsonRpcNotification, signal: AbortSignal): Promise<void> {
    await this.deliver(message, signal);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** An in-process transport whose backend is `handler`. */
export function memoryTransport(handler: MemoryHandler): BackendTransport {
  return new MemoryTransport(handler);
}
