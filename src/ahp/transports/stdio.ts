/**
 * The AHP stdio binding, harness side. Newline-delimited JSON-RPC: one object per line on the
 * backend's stdin and stdout; stderr is diagnostics and goes to the logger, never to parsing.
 *
 * - `persistent`: one long-lived process, started on first use. One message in flight at a time
 *   (the rest wait in order). Responses are correlated by id (AHP-STDIO-001): a well-formed
 *   JSON-RPC line whose id is not the one in flight (a late or repeated answer, an unknown id) is
 *   ignored with a warning and the wait goes on, as the official lifecycle rows
 *   `stdio-unsolicited-old-before-live` and `stdio-unknown-before-live` require; more than
 *   MAX_UNSOLICITED such lines in a row end the process. If the deadline comes with no live
 *   answer, the first such line that arrived while waiting is handed up as the answer (the only
 *   one acquired), so the harness rejects it whole for its id, as the interop row
 *   `wrong-response-id` requires, instead of reporting a bare timeout. A crash fails the message
 *   in flight and the next message restarts the process after a backoff that grows with
 *   consecutive crashes (close() ends a backoff at once). A deadline, a malformed line or an
 *   over-long line ends the process too: the backend then holds an outstanding request or an
 *   untrustworthy stream, and the binding allows only one outstanding request.
 * - `per_event` (./stdio-per-event.ts): one process per message: one line on stdin, EOF, at most
 *   one line back, exit 0.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { DEFAULT_MAX_BODY_BYTES, type Logger, silentLogger } from './options.js';
import {
  LineSplitter,
  type ProcessSpec,
  parseLine,
  releaseAfterExit,
  startProcess,
  stopProcess,
} from './stdio-process.js';
import {
  type BackendTransport,
  type JsonRpcNotification,
  type JsonRpcRequest,
  TransportError,
} from './transport.js';

export interface StdioTransportOptions extends ProcessSpec {
  logger?: Logger;
  maxBodyBytes?: number;
  killGraceMs?: number;
}

interface InFlight {
  id: string | number;
  /** The first well-formed answer with another id seen while this request waited. */
  stray?: Record<string, unknown>;
  resolve: (value: Record<string, unknown>) => void;
  reject: (error: TransportError) => void;
}

export function timeoutError(backendId: string): TransportError {
  return new TransportError('timeout', `deadline reached waiting for backend ${backendId}`, {
    backend: backendId,
  });
}

export function closedError(backendId: string): TransportError {
  return new TransportError('closed', `transport to backend ${backendId} is closed`, { backend: backendId });
}

export function exitDetail(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `signal ${signal}` : `code ${code}`;
}

/** Unsolicited lines in a row (no answer in between) after which a backend is ended as faulty. */
export const MAX_UNSOLICITED = 16;

export class PersistentStdioTransport implements BackendTransport {
  private child: ChildProcessWithoutNullStreams | undefined;
  private inFlight: InFlight | undefined;
  /** A message holds the process (being started, written or answered); later ones wait in `waiting`. */
  private busy = false;
  private readonly waiting: (() => void)[] = [];
  private crashes = 0;
  private unsolicited = 0;
  private lastExit = 0;
  private closed = false;
  private readonly logger: Logger;
  private readonly stopping = new Set<Promise<void>>();
  /** Aborted by close(): ends a restart backoff at once. */
  private readonly closing = new AbortController();

  constructor(private readonly options: StdioTransportOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  request(message: JsonRpcRequest, signal: AbortSignal): Promise<unknown> {
    const child = this.child;
    if (!this.busy && child !== undefined && !this.closed && !signal.aborted) {
      // The common case, a running process and nothing queued: write now, with no queue hop.
      this.busy = true;
      return this.exchange(child, message, signal, this.release);
    }
    return this.enqueue(signal, async () => this.exchange(await this.ensure(signal), message, signal));
  }

  notify(message: JsonRpcNotification, signal: AbortSignal): Promise<void> {
    return this.enqueue(signal, async () => {
      const child = await this.ensure(signal);
      await this.write(child, message, signal);
    });
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.closing.abort();
      this.inFlight?.reject(closedError(this.options.backendId));
      this.inFlight = undefined;
      if (this.child) this.stop(this.child);
      this.child = undefined;
    }
    await Promise.all([...this.stopping]);
  }

  /** Hands the process to the next waiting message, or marks it free. */
  private readonly release = (): void => {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  };

  /**
   * Runs `task` after every earlier message. While it waits in the queue, the caller stops waiting
   * as soon as `signal` aborts; once started, the task answers the abort itself (the exchange may
   * hand up a held-back answer at the deadline).
   */
  private enqueue<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    const id = this.options.backendId;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(timeoutError(id));
      const start = () => {
        signal.removeEventListener('abort', onAbort);
        let run: Promise<T>;
        if (signal.aborted) run = Promise.reject(timeoutError(id));
        else if (this.closed) run = Promise.reject(closedError(id));
        else run = task();
        run.then(resolve, reject).finally(this.release);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      if (this.busy) this.waiting.push(start);
      else {
        this.busy = true;
        start();
      }
    });
  }

  private async ensure(signal: AbortSignal): Promise<ChildProcessWithoutNullStreams> {
    if (this.child) return this.child;
    if (this.crashes > 0) {
      const backoff = Math.min(50 * 2 ** (this.crashes - 1), 2000);
      const wait = this.lastExit + backoff - Date.now();
      if (wait > 0) await sleep(wait, signal, this.closing.signal, this.options.backendId);
    }
    if (this.closed) throw closedError(this.options.backendId);
    const child = startProcess(this.options, this.logger);
    this.child = child;
    this.unsolicited = 0;
    const splitter = new LineSplitter(this.options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    child.stdout.on('data', (chunk: Buffer) => {
      if (this.child !== child) return;
      try {
        splitter.push(chunk, (line) => {
          if (line.length > 0) this.onLine(line);
        });
      } catch (error) {
        this.fault(child, error as TransportError);
      }
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      this.onExit(child, `cannot start ${this.options.command}: ${error.code ?? error.message}`, error.code);
    });
    child.once('exit', (code, sig) => {
      releaseAfterExit(child);
      this.onExit(child, `exited with ${exitDetail(code, sig)}`, undefined, code, sig);
    });
    this.logger('debug', 'backend started', { backend: this.options.backendId, pid: child.pid });
    return child;
  }

  private onLine(line: Buffer): void {
    const message = parseLine(line, this.options.backendId);
    const current = this.inFlight;
    if (current === undefined || message.id !== current.id) {
      if (current !== undefined) current.stray ??= message;
      this.unsolicited++;
      if (this.unsolicited > MAX_UNSOLICITED) {
        throw new TransportError(
          'protocol',
          `backend ${this.options.backendId} wrote ${this.unsolicited} lines in a row that answer nothing in flight`,
          { backend: this.options.backendId },
        );
      }
      this.logger('warn', 'backend wrote a line that answers nothing in flight; ignored', {
        backend: this.options.backendId,
        ...(current === undefined ? {} : { expected: current.id }),
        received: shortId(message.id),
      });
      return;
    }
    this.inFlight = undefined;
    this.crashes = 0;
    this.unsolicited = 0;
    current.resolve(message);
  }

  /** A broken stream: fail the message in flight and end the process. */
  private fault(child: ChildProcessWithoutNullStreams, error: TransportError): void {
    this.logger('warn', 'backend protocol fault; stopping it', {
      backend: this.options.backendId,
      code: error.code,
      message: error.message,
    });
    // Retired first: rejecting hands the process on to the next message, which must not get this one.
    const current = this.inFlight;
    this.inFlight = undefined;
    this.retire(child);
    current?.reject(error);
  }

  private onExit(
    child: ChildProcessWithoutNullStreams,
    what: string,
    errno?: string,
    code?: number | null,
    sig?: NodeJS.Signals | null,
  ) {
    if (this.child === child) {
      this.child = undefined;
      this.crashes++;
      this.lastExit = Date.now();
      this.logger(this.closed ? 'debug' : 'warn', `backend ${what}`, {
        backend: this.options.backendId,
        pid: child.pid,
      });
    }
    if (this.inFlight !== undefined && (this.child === undefined || this.child === child)) {
      this.inFlight.reject(
        new TransportError('transport', `backend ${this.options.backendId} ${what}`, {
          backend: this.options.backendId,
          exitCode: code ?? null,
          signal: sig ?? null,
          errno,
          // A process that cannot start points at its configuration (command, cwd).
          ...(errno !== undefined && this.options.pointer !== undefined
            ? { pointer: this.options.pointer }
            : {}),
        }),
      );
      this.inFlight = undefined;
    }
  }

  private retire(child: ChildProcessWithoutNullStreams): void {
    if (this.child === child) {
      this.child = undefined;
      this.crashes++;
      this.lastExit = Date.now();
    }
    this.stop(child);
  }

  private stop(child: ChildProcessWithoutNullStreams): void {
    const stopping = stopProcess(child, this.options.killGraceMs ?? 2000);
    this.stopping.add(stopping);
    void stopping.finally(() => this.stopping.delete(stopping));
  }

  private write(child: ChildProcessWithoutNullStreams, message: unknown, signal: AbortSignal): Promise<void> {
    const line = `${JSON.stringify(message)}\n`;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(timeoutError(this.options.backendId));
      signal.addEventListener('abort', onAbort, { once: true });
      child.stdin.write(line, (error) => {
        signal.removeEventListener('abort', onAbort);
        if (error) {
          reject(
            new TransportError('transport', `cannot write to backend ${this.options.backendId}`, {
              backend: this.options.backendId,
            }),
          );
        } else resolve();
      });
    });
  }

  /**
   * Writes one request and resolves with the line that answers it. One promise and one abort
   * listener per call: the deadline rejects at once and ends the process, which still holds the
   * request (only one may be outstanding).
   */
  private exchange(
    child: ChildProcessWithoutNullStreams,
    message: JsonRpcRequest,
    signal: AbortSignal,
    settled: () => void = noop,
  ): Promise<Record<string, unknown>> {
    const backend = this.options.backendId;
    let line = '';
    try {
      if (!signal.aborted) line = `${JSON.stringify(message)}\n`;
    } catch {}
    if (line === '') {
      settled();
      if (signal.aborted) return Promise.reject(timeoutError(backend));
      return Promise.reject(
        new TransportError('transport', `cannot serialise the request to backend ${backend}`, { backend }),
      );
    }
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const onAbort = () => {
        if (this.inFlight !== current) return;
        this.inFlight = undefined;
        this.retire(child);
        settled();
        // Settled synchronously, inside the abort: callWithDeadline takes an answer settled there.
        if (current.stray) resolve(current.stray);
        else reject(timeoutError(backend));
      };
      const current: InFlight = {
        id: message.id,
        resolve: (value) => {
          signal.removeEventListener('abort', onAbort);
          settled();
          resolve(value);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          settled();
          reject(error);
        },
      };
      this.inFlight = current;
      signal.addEventListener('abort', onAbort, { once: true });
      child.stdin.write(line, (error) => {
        if (error && this.inFlight === current) {
          this.inFlight = undefined;
          current.reject(new TransportError('transport', `cannot write to backend ${backend}`, { backend }));
        }
      });
    });
  }
}

function noop(): void {}

/** An id fit for a log line: a number or a string of at most 128 characters, else null. */
function shortId(id: unknown): string | number | null {
  if (typeof id === 'number' || (typeof id === 'string' && id.length <= 128)) return id;
  return null;
}

/** Waits `ms`; a deadline ends the wait as a timeout, closing the transport as closed. */
function sleep(ms: number, signal: AbortSignal, closing: AbortSignal, backendId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      closing.removeEventListener('abort', onClose);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    const onAbort = () => {
      done();
      reject(timeoutError(backendId));
    };
    const onClose = () => {
      done();
      reject(closedError(backendId));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    closing.addEventListener('abort', onClose, { once: true });
  });
}
