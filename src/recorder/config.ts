/**
 * Where the session recorder lives for one user (one `TALLY_HOME`): its stable port
 * (`recorder.json`, a free port picked once), its per-user secret (`run/recorder.secret`, 0600,
 * sent by every client as a bearer token), its pid and log, and the spool command shims write to
 * while it is down. The secret keeps other local users and processes (and other homes' sessions)
 * out; it does not keep out the agent, which runs as the same user (docs/security.md).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseJson } from '../core/canonical.js';
import { TallyError } from '../core/errors.js';
import { isJsonObject } from '../core/json.js';
import { readRegularFileSync } from '../core/regular-file.js';

/** recorder.json and the secret: a few dozen bytes each (read as regular files only, never waited on). */
const SMALL_FILE_LIMIT = 64 * 1024;

export type RecorderErrorCode =
  | 'config'
  | 'secret'
  | 'unreachable'
  | 'refused'
  | 'stopping'
  | 'start-failed'
  | 'foreign-listener';
export class RecorderError extends TallyError<RecorderErrorCode> {}

/** The environment variable that carries the secret to hooks that expand it (Claude Code http hooks). */
export const SECRET_ENV = 'TALLY_RECORDER_SECRET';
/** The environment variable that names the Tally session a run's hooks belong to. */
export const SESSION_ENV = 'TALLY_SESSION';

/** What a run token is derived under, so that no other use of the secret's MAC can stand for one. */
const RUN_TOKEN_CONTEXT = 'tally-run-token/v1\0';

/**
 * The bearer token `tally run` hands its agent's http hooks instead of the secret:
 * `run_` + hex(HMAC-SHA256(key: the secret's text, message: "tally-run-token/v1\0" + session)).
 * The recorder takes it for the native hook endpoints of that session only (docs/recorder.md), so a
 * listener that takes the port while the recorder is down learns no more than that.
 */
/** What the installed hooks' token is derived under. */
const HOOKS_TOKEN_CONTEXT = 'tally-hooks-token/v1\0';

/**
 * The bearer token `tally recorder env` gives the hooks `tally install` writes, which send it from
 * the agent's environment: `hooks_` + hex(HMAC-SHA256(key: the secret's text, message:
 * "tally-hooks-token/v1\0")). The recorder takes it for the native hook endpoints only, of any
 * session: a listener on the port while the recorder is down learns no more than that.
 */
export function hooksToken(secret: string): string {
  return `hooks_${createHmac('sha256', secret).update(HOOKS_TOKEN_CONTEXT).digest('hex')}`;
}

export function runToken(secret: string, session: string): string {
  return `run_${createHmac('sha256', secret)
    .update(RUN_TOKEN_CONTEXT + session)
    .digest('hex')}`;
}

export interface RecorderPaths {
  home: string;
  config: string;
  secret: string;
  pid: string;
  log: string;
  spool: string;
}

export function recorderPaths(home: string): RecorderPaths {
  return {
    home,
    config: join(home, 'recorder.json'),
    secret: join(home, 'run', 'recorder.secret'),
    pid: join(home, 'run', 'recorder.pid'),
    log: join(home, 'run', 'recorder.log'),
    spool: join(home, 'spool'),
  };
}

export interface RecorderConfig {
  host: '127.0.0.1';
  port: number;
  /** Exit after this long without a request. */
  idleMs: number;
}

export const DEFAULT_IDLE_MS = 60 * 60 * 1000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The recorder's configuration, created once (a free port picked then and kept). */
export async function recorderConfig(
  paths: RecorderPaths,
  env: NodeJS.ProcessEnv = {},
): Promise<RecorderConfig> {
  let stored: Partial<RecorderConfig> = {};
  try {
    const value = parseJson(readRegularFileSync(paths.config, SMALL_FILE_LIMIT));
    if (!isJsonObject(value)) throw new Error('not a JSON object');
    stored = value as Partial<RecorderConfig>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new RecorderError(
        'config',
        `${paths.config} is not a recorder configuration: ${(error as Error).message}`,
      );
  }
  const valid =
    Number.isInteger(stored.port) && (stored.port as number) > 0 && (stored.port as number) < 65536;
  const config: RecorderConfig = {
    host: '127.0.0.1',
    port: valid ? (stored.port as number) : await freePort(),
    idleMs:
      Number.isInteger(stored.idleMs) && (stored.idleMs as number) > 0
        ? (stored.idleMs as number)
        : DEFAULT_IDLE_MS,
  };
  if (!valid) {
    mkdirSync(paths.home, { recursive: true, mode: 0o700 });
    try {
      // Created once: a second process racing to create it reads the first one's port instead.
      writeFileSync(paths.config, `${JSON.stringify({ port: config.port, idleMs: config.idleMs })}\n`, {
        mode: 0o600,
        flag: stored.port === undefined ? 'wx' : 'w',
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return recorderConfig(paths, env);
      throw error;
    }
  }
  const idle = Number(env.TALLY_RECORDER_IDLE_MS);
  if (Number.isInteger(idle) && idle > 0) config.idleMs = idle;
  return config;
}

/** The per-user secret, created once (0600); refused when others can read it. */
export function recorderSecret(paths: RecorderPaths, create: boolean): string {
  try {
    const mode = statSync(paths.secret).mode & 0o777;
    if ((mode & 0o077) !== 0)
      throw new RecorderError(
        'secret',
        `${paths.secret} is readable by others (mode ${mode.toString(8)}): chmod 600 it`,
      );
    const secret = readRegularFileSync(paths.secret, SMALL_FILE_LIMIT).toString('utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(secret))
      throw new RecorderError('secret', `${paths.secret} does not hold a recorder secret`);
    return secret;
  } catch (error) {
    if (error instanceof RecorderError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create)
      throw new RecorderError(
        'secret',
        `cannot read the recorder secret ${paths.secret}: ${(error as NodeJS.ErrnoException).code}`,
      );
  }
  mkdirSync(join(paths.home, 'run'), { recursive: true, mode: 0o700 });
  chmodSync(join(paths.home, 'run'), 0o700);
  const secret = randomBytes(32).toString('hex');
  try {
    writeFileSync(paths.secret, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return recorderSecret(paths, false);
    throw error;
  }
  return secret;
}
