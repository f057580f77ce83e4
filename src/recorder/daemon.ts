/**
 * The recorder process (`tally recorder run`): one per user, started on demand and detached, the
 * single writer of every session it holds. It exits after being idle (no request in flight and
 * none for `idleMs`), on SIGTERM/SIGINT, or on `POST /stop`, letting every session go unsealed: each stays
 * open on disk, and the next recorder resumes its log from the verified last record. Work already
 * under way (a close above all) is finished and answered first; any asked after the stop is refused.
 */
import { rmSync, writeFileSync } from 'node:fs';
import type { Logger } from '../ahp/transports/options.js';
import { redactText } from '../evidence/redact.js';
import { recorderConfig, recorderPaths, recorderSecret } from './config.js';
import { SessionRegistry } from './registry.js';
import { createRecorderServer } from './server.js';
import { ingestSpool } from './spool.js';

export interface RunOptions {
  home: string;
  env: NodeJS.ProcessEnv;
  /** The ship key's passphrase, given over a pipe by the starting CLI (never env or file). */
  passphrase?: string;
  log?: (line: string) => void;
  /** Told once the recorder listens and its pid file is written (before the spool is ingested). */
  onListening?: () => void;
}

/** Runs until stopped; resolves with the exit code. */
export async function runRecorder(options: RunOptions): Promise<number> {
  const paths = recorderPaths(options.home);
  const config = await recorderConfig(paths, options.env);
  const secret = recorderSecret(paths, true);
  const write = options.log ?? ((line: string) => process.stderr.write(line));
  // Redacted: backends' stderr and error messages can carry what a secret looks like.
  const logger: Logger = (level, message, fields) => {
    const from = typeof fields?.backend === 'string' ? ` [${fields.backend}]` : '';
    const line = typeof fields?.line === 'string' ? `: ${fields.line}` : '';
    write(`${new Date().toISOString()} ${level}${from} ${redactText(`${message}${line}`)}\n`);
  };
  const registry = new SessionRegistry(options.env, options.passphrase, logger);
  let lastActivity = Date.now();
  let stopping: ((code: number) => void) | undefined;
  const stopped = new Promise<number>((resolve) => {
    stopping = resolve;
  });
  // Requests wait until the spool is ingested: what a shim spooled while the recorder was down is
  // recorded before anything newer, and a client that finds the recorder answering finds the
  // sessions the spool opened held (a close then seals them with their spooled events). The spool
  // is ingested only once listening succeeded: the one recorder of this home does it.
  let spoolDone: () => void = () => undefined;
  const ingested = new Promise<void>((resolve) => {
    spoolDone = resolve;
  });
  const server = createRecorderServer({
    secret,
    registry,
    logger,
    ready: ingested,
    started: new Date().toISOString(),
    onActivity: () => {
      lastActivity = Date.now();
    },
    onStop: () => stopping?.(0),
  });
  // A request still being answered (a close sealing a large session, a body still arriving) is not
  // idleness: the idle time counts from the end of the last one.
  let inFlight = 0;
  server.on('request', (_req, res) => {
    inFlight += 1;
    res.once('close', () => {
      inFlight -= 1;
      lastActivity = Date.now();
    });
  });
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(config.port, config.host, () => ok());
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    logger(
      'error',
      `cannot listen on ${config.host}:${config.port}: ${code}${code === 'EADDRINUSE' ? ' (is a recorder already running?)' : ''}`,
    );
    return code === 'EADDRINUSE' ? 3 : 1;
  }
  // Made new: whatever stood at its name (a FIFO would hold the write forever) is removed first.
  rmSync(paths.pid, { force: true });
  writeFileSync(paths.pid, `${JSON.stringify({ pid: process.pid, port: config.port })}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  options.onListening?.();
  logger(
    'info',
    `recorder ${process.pid} listening on ${config.host}:${config.port} (idle exit after ${config.idleMs} ms)`,
  );
  try {
    const spooled = await ingestSpool(paths, registry, logger);
    if (spooled > 0) logger('info', `ingested ${spooled} spooled event(s)`);
  } finally {
    spoolDone();
  }
  const idle = setInterval(
    () => {
      if (inFlight === 0 && Date.now() - lastActivity >= config.idleMs) stopping?.(0);
    },
    Math.max(50, Math.min(config.idleMs / 4, 10_000)),
  );
  const onSignal = () => stopping?.(0);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const code = await stopped;
  clearInterval(idle);
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  // No new connection from here (the port is free for the next recorder, so the pid file goes
  // now), and no new work on a connection already open (a keep-alive one): refused. Work under
  // way — a close above all — is finished and answered first: cut off, a close's client would be
  // told the seal failed while it went on sealing.
  const closed = new Promise<void>((done) => server.close(() => done()));
  rmSync(paths.pid, { force: true });
  await registry.finishWork();
  server.closeAllConnections();
  await closed;
  await registry.releaseAll();
  logger('info', `recorder ${process.pid} stopped`);
  return code;
}
