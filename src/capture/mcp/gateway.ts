/**
 * `tally mcp`'s process side: start the MCP server with piped stdio, relay between it and the
 * client on our own stdio, and stop it the way the MCP stdio transport says (close its stdin,
 * then SIGTERM, then SIGKILL). Resolves with the server's exit once every answer is recorded.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { TallyError } from '../../core/errors.js';
import type { McpServerIdentity } from './events.js';
import { McpRelay, type RelayOptions } from './relay.js';

export type McpGatewayErrorCode = 'spawn-failed';

/** The server could not be started; `detail.command` names it. */
export class McpGatewayError extends TallyError<McpGatewayErrorCode> {}

export interface GatewayOptions {
  server: McpServerIdentity;
  env: NodeJS.ProcessEnv;
  harnessSession: string;
  sink: RelayOptions['sink'];
  clientIn: Readable;
  clientOut: Writable;
  onWarning?: (message: string) => void;
  /** How long the server may take to exit once its stdin is closed (default 2 s), before SIGTERM. */
  graceMs?: number;
  /** Called with the running server, to forward signals to it. */
  onStarted?: (stop: (signal: NodeJS.Signals) => void) => void;
}

export interface GatewayExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export async function runGateway(options: GatewayOptions): Promise<GatewayExit> {
  const { server } = options;
  const child = spawn(server.command, server.args, {
    cwd: server.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (error) => resolve(error));
  });
  if (spawned !== null)
    throw new McpGatewayError(
      'spawn-failed',
      `the MCP server '${server.command}' could not be started: ${(spawned as NodeJS.ErrnoException).code ?? spawned.message}`,
      { command: server.command },
    );
  // A server that exits while we write to it is reported by its exit, not by EPIPE.
  child.stdin.on('error', () => undefined);
  options.clientOut.on('error', () => undefined);
  const relay = new McpRelay({
    server,
    harnessSession: options.harnessSession,
    sink: options.sink,
    clientIn: options.clientIn,
    clientOut: options.clientOut,
    serverIn: child.stdin,
    serverOut: child.stdout,
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
  });
  const closed = new Promise<GatewayExit>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  options.onStarted?.((signal) => child.kill(signal));
  relay.start();
  let escalation: NodeJS.Timeout | undefined;
  void relay.clientDone.then(() => {
    const grace = options.graceMs ?? 2000;
    escalation = setTimeout(() => {
      child.kill('SIGTERM');
      escalation = setTimeout(() => child.kill('SIGKILL'), grace);
      escalation.unref();
    }, grace);
    escalation.unref();
  });
  const exit = await closed;
  if (escalation) clearTimeout(escalation);
  relay.serverGone(
    exit.signal ? `the server was ended by ${exit.signal}` : `the server exited (${exit.code})`,
  );
  await relay.drain();
  return exit;
}
