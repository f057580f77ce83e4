/**
 * The in-process transport: a backend handler function answers directly, with no process or
 * socket. By default messages still cross a serialisation boundary in both directions (JSON text,
 * parsed strictly), so neither side can share or mutate the other's objects, exactly as on a wire.
 * Used for protocol tests and for backends that live inside the harness process (`in_process`).
 *
 * `shared: true` hands the messages over by reference instead, for a backend that is the
 * harness's own code and neither keeps nor changes what it is given (Tally's certificate judge):
 * the dispatcher has already validated the request it sends and validates the answer it gets, so
 * a copy in between would check the same object twice in the same process.
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

export interface MemoryOptions {
  /** Messages by reference, not copied (the harness's own backend only; see the module comment). */
  shared?: boolean;
}

export class MemoryTransport implements BackendTransport {
  private closed = false;
  private readonly copy: (value: unknown) => unknown;
  constructor(
    private readonly handler: MemoryHandler,
    options: MemoryOptions = {},
  ) {
    this.copy = options.shared === true ? (value) => value : wire;
  }

  private async deliver(
    message: JsonRpcRequest | JsonRpcNotification,
    signal: AbortSignal,
  ): Promise<unknown> {
    if (this.closed) throw new TransportError('closed', 'the transport is closed');
    if (signal.aborted) throw abortReason(signal);
    const sent = this.copy(message) as JsonRpcRequest | JsonRpcNotification;
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
    return this.copy(answer);
  }

  async notify(message: JsonRpcNotification, signal: AbortSignal): Promise<void> {
    await this.deliver(message, signal);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** An in-process transport whose backend is `handler`. */
export function memoryTransport(handler: MemoryHandler, options: MemoryOptions = {}): BackendTransport {
  return new MemoryTransport(handler, options);
}
