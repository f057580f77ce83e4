/**
 * The AHP stdio binding's `per_event` lifecycle, harness side: one process per message. One line on
 * stdin, then EOF; at most one line back on stdout; exit 0. A notification's process may print
 * nothing and its exit status is only logged.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { DEFAULT_MAX_BODY_BYTES, type Logger, silentLogger } from './options.js';
import { closedError, exitDetail, type StdioTransportOptions, timeoutError } from './stdio.js';
import {
  exited,
  LineSplitter,
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

export class PerEventStdioTransport implements BackendTransport {
  private closed = false;
  private readonly live = new Set<ChildProcessWithoutNullStreams>();
  private readonly logger: Logger;

  constructor(private readonly options: StdioTransportOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  async request(message: JsonRpcRequest, signal: AbortSignal): Promise<unknown> {
    const lines = await this.run(message, signal, true);
    const id = this.options.backendId;
    if (lines.length === 0)
      throw new TransportError('protocol', `backend ${id} exited without a response`, { backend: id });
    if (lines.length > 1) {
      throw new TransportError(
        'protocol',
        `backend ${id} wrote ${lines.length} lines; at most one response is allowed`,
        {
          backend: id,
          lines: lines.length,
        },
      );
    }
    return parseLine(lines[0]!, id);
  }

  async notify(message: JsonRpcNotification, signal: AbortSignal): Promise<void> {
    await this.run(message, signal, false);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.live].map((child) => stopProcess(child, this.options.killGraceMs ?? 2000)));
  }

  /** One process, one message, EOF; resolves with its non-empty stdout lines after it exits. */
  private run(message: unknown, signal: AbortSignal, strictExit: boolean): Promise<Buffer[]> {
    const id = this.options.backendId;
    if (this.closed) return Promise.reject(closedError(id));
    if (signal.aborted) return Promise.reject(timeoutError(id));
    const child = startProcess(this.options, this.logger);
    this.live.add(child);
    void exited(child).then(() => this.live.delete(child));
    return new Promise<Buffer[]>((resolve, reject) => {
      const lines: Buffer[] = [];
      const splitter = new LineSplitter(this.options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
      let settled = false;
      let exitedWith: { code: number | null; sig: NodeJS.Signals | null } | undefined;
      let stdoutDone = false;
      const finish = (error?: TransportError) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (error) {
          void stopProcess(child, 0);
          reject(error);
        } else resolve(lines); // the exit released the pipes (releaseAfterExit)
      };
      const onAbort = () => finish(timeoutError(id));
      signal.addEventListener('abort', onAbort, { once: true });
      const maybeDone = () => {
        if (!exitedWith || !stdoutDone) return;
        const { code, sig } = exitedWith;
        if (code !== 0 && strictExit) {
          finish(
            new TransportError('transport', `backend ${id} exited with ${exitDetail(code, sig)}`, {
              backend: id,
              exitCode: code,
              signal: sig,
            }),
          );
        } else {
          if (code !== 0)
            this.logger('info', 'observer process exited non-zero', {
              backend: id,
              exitCode: code,
              signal: sig,
            });
          if (splitter.rest > 0 && strictExit) {
            finish(
              new TransportError('protocol', `backend ${id} ended its response without a newline`, {
                backend: id,
              }),
            );
          } else finish();
        }
      };
      child.stdout.on('data', (chunk: Buffer) => {
        try {
          splitter.push(chunk, (line) => {
            if (line.length > 0) lines.push(line);
          });
        } catch (error) {
          finish(error as TransportError);
        }
      });
      // Output ends when stdout does, or when a process the backend left behind still holds it
      // and releaseAfterExit closes our end once the backend has exited.
      const outputDone = () => {
        if (stdoutDone) return;
        stdoutDone = true;
        maybeDone();
      };
      child.stdout.on('end', outputDone);
      child.stdout.on('close', outputDone);
      child.once('error', (error: NodeJS.ErrnoException) =>
        finish(
          new TransportError('transport', `cannot start backend ${id}: ${error.code ?? error.message}`, {
            backend: id,
            errno: error.code,
            ...(this.options.pointer !== undefined ? { pointer: this.options.pointer } : {}),
          }),
        ),
      );
      child.once('exit', (code, sig) => {
        exitedWith = { code, sig };
        releaseAfterExit(child);
        maybeDone();
      });
      child.stdin.end(`${JSON.stringify(message)}\n`);
    });
  }
}
