/**
 * Talking to the recorder: find it (its port in `recorder.json`, its secret in `run/`), start it
 * when it is not running (detached; the ship key's passphrase handed over its stdin, never in an
 * environment variable or a file), and send it requests. Used by the CLI, `tally run` and the
 * command shims.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  RecorderError,
  type RecorderPaths,
  recorderConfig,
  recorderPaths,
  recorderSecret,
} from './config.js';
import { foreignListener } from './listener.js';
import type { SessionSummary } from './registry.js';

const TALLY_BIN = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));

export interface RecorderStatus {
  pid: number;
  port: number;
  started_at: string;
  sessions: SessionSummary[];
}

export interface Reply {
  status: number;
  body: unknown;
}

/**
 * Whether the recorder answers: `up` with its status; `down` when nothing listens on its port;
 * `silent` when something listens and does not answer in time (a recorder that stopped answering).
 */
export type Probe = { state: 'up'; status: RecorderStatus } | { state: 'down' } | { state: 'silent' };

/**
 * One request to the recorder on 127.0.0.1; rejects with RecorderError('unreachable') when it is
 * not there, with `detail.timeout` when it took the connection and did not answer within `timeoutMs`.
 */
export function send(
  port: number,
  secret: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<Reply> {
  // The request carries the secret: never to a listener of another user (./listener.ts).
  const foreign = foreignListener(port);
  if (foreign !== undefined)
    return Promise.reject(new RecorderError('foreign-listener', foreign, { port, not_answering: true }));
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          authorization: `Bearer ${secret}`,
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': String(payload.length) }
            : {}),
          ...headers,
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? null : JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    let timedOut = false;
    req.on('timeout', () => {
      timedOut = true;
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        new RecorderError(
          'unreachable',
          `the recorder on 127.0.0.1:${port} did not answer: ${error.code ?? error.message}`,
          timedOut ? { timeout: true, timeout_ms: timeoutMs } : { errno: error.code },
        ),
      ),
    );
    req.end(payload);
  });
}

export class RecorderClient {
  private constructor(
    readonly paths: RecorderPaths,
    readonly port: number,
    readonly secret: string,
  ) {}

  /** The client of this home's recorder (its configuration and secret made if missing). */
  static async of(home: string, env: NodeJS.ProcessEnv = {}): Promise<RecorderClient> {
    const paths = recorderPaths(home);
    const config = await recorderConfig(paths, env);
    return new RecorderClient(paths, config.port, recorderSecret(paths, true));
  }

  /** The client of a recorder this home has had (a configuration exists), else null: nothing is created. */
  static async existing(home: string, env: NodeJS.ProcessEnv = {}): Promise<RecorderClient | null> {
    const paths = recorderPaths(home);
    if (!existsSync(paths.config) || !existsSync(paths.secret)) return null;
    const config = await recorderConfig(paths, env);
    return new RecorderClient(paths, config.port, recorderSecret(paths, false));
  }

  /** The running recorder when it holds `session` (so it must be asked to act on it), else null. */
  static async holding(
    home: string,
    session: string,
    env: NodeJS.ProcessEnv = {},
  ): Promise<RecorderClient | null> {
    const client = await RecorderClient.existing(home, env);
    const status = await client?.status();
    return status?.sessions.some((s) => s.session === session) ? client! : null;
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply> {
    return send(this.port, this.secret, method, path, body, headers);
  }

  /** The recorder's status, or null when none is running (or none answers). */
  async status(): Promise<RecorderStatus | null> {
    try {
      const probe = await this.probe();
      return probe.state === 'up' ? probe.status : null;
    } catch (error) {
      // Another user's process on the port is no recorder of this home.
      if (error instanceof RecorderError && error.code === 'foreign-listener') return null;
      throw error;
    }
  }

  /** Asks for the recorder's status, telling a recorder that is gone from one that stopped answering. */
  async probe(timeoutMs = 2000): Promise<Probe> {
    try {
      const reply = await send(this.port, this.secret, 'GET', '/status', undefined, {}, timeoutMs);
      if (reply.status !== 200) return { state: 'down' };
      return {
        state: 'up',
        status: { ...(reply.body as Omit<RecorderStatus, 'port'>), port: this.port },
      };
    } catch (error) {
      // Another user's process on the port: no recorder of this user can listen there; said as it is.
      if (error instanceof RecorderError && error.code !== 'foreign-listener')
        return error.detail?.timeout === true ? { state: 'silent' } : { state: 'down' };
      throw error;
    }
  }

  /**
   * The running recorder's status, starting one (detached) when none answers. `passphrase` is
   * written to the new recorder's stdin and the pipe closed.
   */
  async ensure(
    options: { env: NodeJS.ProcessEnv; passphrase?: string; timeoutMs?: number } = { env: {} },
  ): Promise<RecorderStatus> {
    const probe = await this.probe();
    if (probe.state === 'up') return probe.status;
    // Another recorder could not take the port it holds: said at once, not after a start that must fail.
    if (probe.state === 'silent') throw this.silent();
    mkdirSync(join(this.paths.home, 'run'), { recursive: true, mode: 0o700 });
    const log = openSync(this.paths.log, 'a', 0o600);
    const child = spawn(process.execPath, [TALLY_BIN, 'recorder', 'run', '--ready'], {
      detached: true,
      stdio: ['pipe', 'pipe', log],
      // Each held session's log has one durable write in flight: enough threads that eight
      // sessions' syncs run side by side rather than queue behind libuv's default four.
      env: { UV_THREADPOOL_SIZE: '16', ...options.env, TALLY_HOME: this.paths.home },
    });
    closeSync(log);
    child.stdin!.end(options.passphrase === undefined ? '' : `${options.passphrase}\n`);
    child.unref();
    const deadline = Date.now() + (options.timeoutMs ?? 15_000);
    let exited: number | null = null;
    // Woken by the recorder's `ready` line (or its stdout closing, or its exit) rather than polling.
    let wake: (() => void) | undefined;
    const woken = () => wake?.();
    const stdout = child.stdout!;
    stdout.on('data', woken);
    stdout.once('end', woken);
    child.once('exit', (code) => {
      exited = code ?? 1;
      woken();
    });
    (stdout as unknown as { unref?: () => void }).unref?.();
    try {
      while (Date.now() < deadline) {
        const status = await this.status();
        if (status) return status;
        // Exit code 3: another recorder took the port first; it will answer.
        if (exited !== null && exited !== 3) break;
        await new Promise<void>((r) => {
          const timer = setTimeout(r, 50);
          wake = () => {
            clearTimeout(timer);
            r();
          };
        });
      }
    } finally {
      stdout.destroy();
    }
    const tail = existsSync(this.paths.log)
      ? readFileSync(this.paths.log, 'utf8').split('\n').slice(-5).join('\n')
      : '';
    throw new RecorderError('start-failed', `the recorder did not start (see ${this.paths.log}):\n${tail}`);
  }

  /** What a caller is told of a recorder that holds its port and does not answer. */
  silent(): RecorderError {
    return new RecorderError(
      'unreachable',
      `a recorder listens on 127.0.0.1:${this.port} but does not answer: no session it holds is answered or recorded until it does (its log: ${this.paths.log}; its pid: ${this.paths.pid})`,
      { port: this.port, not_answering: true },
    );
  }

  async stop(): Promise<boolean> {
    try {
      const reply = await send(this.port, this.secret, 'POST', '/stop', {}, {}, 5000);
      return reply.status === 200;
    } catch (error) {
      if (error instanceof RecorderError) return false;
      throw error;
    }
  }
}

/** Throws a RecorderError carrying the recorder's own error message for a non-200 reply. */
export function expectOk(reply: Reply, what: string): unknown {
  if (reply.status === 200) return reply.body;
  const message =
    (reply.body as { error?: { message?: string } } | null)?.error?.message ?? JSON.stringify(reply.body);
  throw new RecorderError('refused', `${what}: the recorder answered ${reply.status}: ${message}`);
}
