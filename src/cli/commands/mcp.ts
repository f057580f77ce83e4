/**
 * `tally mcp [--name SERVER] [--agent NAME] -- <server command…>`: the MCP gateway (docs/mcp.md).
 * Our stdin and stdout are the MCP client's transport; nothing but relayed bytes goes to stdout.
 *
 * Where it records: through the recorder when the recorder holds this project's session (or the
 * run's `TALLY_SESSION`), as the hooks do, so the recorder stays the one writer; otherwise into
 * the project's open session, or into a session of its own (under --agent's certificate) that it
 * seals when the server exits. It holds that session's log for as long as it runs.
 */
import { randomBytes } from 'node:crypto';
import { basename, resolve } from 'node:path';
import type { BoundaryDecision } from '../../boundary/boundary.js';
import { runGateway } from '../../capture/mcp/gateway.js';
import { createHttpGateway } from '../../capture/mcp/http.js';
import type { GatewaySink } from '../../capture/mcp/relay.js';
import { boundarySink, verdictOf } from '../../capture/mcp/sink.js';
import { tallyHome } from '../../core/home.js';
import { isJsonObject } from '../../core/json.js';
import { expectOk, RecorderClient } from '../../recorder/client.js';
import { resolveAgent } from '../../session/agents.js';
import { defaultTrustedKeys } from '../../session/identity.js';
import { closeSession, openSession, startSession } from '../../session/lifecycle.js';
import { type Places, projectRootFor } from '../../session/paths.js';
import { currentSession, readSessionInfo } from '../../session/store.js';
import { type Command, type CommandContext, parseFlags, UsageError } from '../command.js';
import { harnessLogger } from '../harness-logger.js';
import { tuneForLongRunning } from '../long-running.js';
import { placesOf, signerOf } from '../session-context.js';

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** Launchers whose first operand names the server better than they do. */
const LAUNCHERS = new Set(['node', 'npx', 'uvx', 'python', 'python3', 'deno', 'bun', 'pnpm', 'yarn', 'npm']);

export const command: Command = {
  summary: 'MCP gateway: relay an MCP stdio server, judging and recording every tool call',
  usage: [
    'usage: tally mcp [--name SERVER] [--agent NAME] -- <server command…>',
    '       tally mcp --http URL [--port N] [--name SERVER] [--agent NAME]',
    '',
    'Runs the MCP server and relays its stdio transport unchanged, byte for byte. Every tools/call is',
    'judged first (tool.before, named mcp__SERVER__TOOL): a denied call is answered with an isError',
    'tool result carrying the reason and never reaches the server. Every call is recorded with its',
    'arguments (redacted), result digest, error and duration.',
    '',
    '  --name SERVER  the server name in tool names (default: from the command); use the name the',
    '                 client gives the server, so certificates read the same names',
    '  --agent NAME   the certificate a session opened by the gateway runs under',
    '',
    'With --http: a local streamable-HTTP endpoint (127.0.0.1, --port or a free one; its URL printed on',
    'stdout) in front of the remote MCP server at URL, judging and recording the same way until stopped.',
    '',
    'Records through the recorder when it holds the project’s session (or TALLY_SESSION); otherwise',
    'into the project’s open session, or a session of its own, sealed when the server exits.',
  ].join('\n'),
  async run(argv, ctx) {
    tuneForLongRunning();
    if (argv.includes('--http') && !argv.includes('--')) return runHttp(argv, ctx);
    const split = argv.indexOf('--');
    if (split < 0 || split === argv.length - 1)
      throw new UsageError('expected the server command after --: tally mcp [--name S] -- <command…>');
    const { values, positionals } = parseFlags(argv.slice(0, split), {
      name: { type: 'string' },
      agent: { type: 'string' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' before --`);
    const [commandName, ...args] = argv.slice(split + 1) as [string, ...string[]];
    const name = values.name ?? serverName(commandName, args);
    if (!SERVER_NAME.test(name))
      throw new UsageError(
        `--name: '${name}' is not a server name (letters, digits, '_' and '-', up to 64, no '__')`,
      );
    if (name.includes('__')) throw new UsageError(`--name: '${name}' must not contain '__'`);
    const harnessSession = `mcp-${name}-${randomBytes(4).toString('hex')}`;
    const server = { name, command: commandName, args, cwd: ctx.cwd };
    const target = await recordingTarget(ctx, values.agent);
    try {
      const exit = await runGateway({
        server,
        env: ctx.env,
        harnessSession,
        sink: target.sink(harnessSession),
        clientIn: process.stdin,
        clientOut: process.stdout,
        onWarning: (message) => ctx.stderr(`tally mcp: ${message}\n`),
        onStarted: (stop) => {
          for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
            process.once(signal, () => stop(signal));
        },
      });
      process.stdin.destroy();
      return exit.code ?? 1;
    } finally {
      await target.close(ctx);
    }
  },
};

async function runHttp(argv: string[], ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    http: { type: 'string' },
    port: { type: 'string' },
    name: { type: 'string' },
    agent: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  let upstream: URL;
  try {
    upstream = new URL(values.http ?? '');
  } catch {
    throw new UsageError(`--http: '${values.http}' is not a URL`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
    throw new UsageError('--http: the URL must be http:// or https://');
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError('--port: expected a port number (0 for a free one)');
  const name =
    values.name ?? (upstream.hostname.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'server');
  if (!SERVER_NAME.test(name) || name.includes('__'))
    throw new UsageError(`--name: '${name}' is not a server name (letters, digits, '_' and '-', no '__')`);
  const harnessSession = `mcp-${name}-${randomBytes(4).toString('hex')}`;
  const target = await recordingTarget(ctx, values.agent);
  const gateway = createHttpGateway({
    upstream,
    server: { name, command: upstream.href, args: [], cwd: ctx.cwd, url: upstream.href },
    harnessSession,
    sink: target.sink(harnessSession),
    onWarning: (message) => ctx.stderr(`tally mcp: ${message}\n`),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      gateway.server.once('error', reject);
      gateway.server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = gateway.server.address();
    const local = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/mcp`;
    ctx.stdout(`${local}\n`);
    ctx.stderr(`tally mcp: ${local} → ${upstream.href}\n`);
    await new Promise<void>((resolve) => {
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
    });
    await new Promise<void>((resolve) => {
      gateway.server.close(() => resolve());
      gateway.server.closeAllConnections();
    });
    await gateway.drain();
    return 0;
  } finally {
    await target.close(ctx);
  }
}

/** The server's name from its command: the command's base name, or a launcher's first operand. */
function serverName(command: string, args: readonly string[]): string {
  let word = basename(command);
  if (LAUNCHERS.has(word.replace(/\.(exe|cmd)$/, ''))) {
    const operand = args.find((a) => !a.startsWith('-'));
    if (operand) word = basename(operand);
  }
  const cleaned = word
    .replace(/^@[^/]*\//, '')
    .replace(/\.(m?js|cjs|ts|py|exe|cmd)$/, '')
    .replace(/@.*$/, '')
    .replace(/^(mcp-server-|server-)/, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/_{2,}/g, '_')
    .replace(/^-+|-+$/g, '');
  return cleaned === '' ? 'server' : cleaned.slice(0, 64);
}

interface RecordingTarget {
  sink(harnessSession: string): GatewaySink;
  close(ctx: CommandContext): Promise<void>;
}

async function recordingTarget(ctx: CommandContext, agent: string | undefined): Promise<RecordingTarget> {
  const where = placesOf(ctx);
  const named = ctx.env.TALLY_SESSION;
  const client = await RecorderClient.existing(tallyHome(ctx.env), ctx.env);
  const status = await client?.status();
  const held = status?.sessions.find((s) =>
    named !== undefined ? s.session === named : s.state === where.state,
  );
  if (client && held) return recorderTarget(client, held.session, ctx.cwd);
  return ownTarget(ctx, where, named, agent);
}

function recorderTarget(client: RecorderClient, session: string, cwd: string): RecordingTarget {
  const ingest = async (mode: 'decide' | 'observe', event: unknown, harnessSession: string) =>
    expectOk(
      await client.request('POST', '/ingest', {
        source: 'mcp',
        harness: 'mcp',
        mode,
        event,
        cwd,
        session,
        harness_session: harnessSession,
        agent: { instance: harnessSession },
      }),
      'recording through the recorder',
    );
  return {
    sink: (harnessSession) => ({
      async decide(event) {
        const reply = await ingest('decide', event, harnessSession);
        const decision = isJsonObject(reply) ? (reply.decision as BoundaryDecision | null) : null;
        // An event the session already held (a retry) has no new decision; it was judged once.
        if (!decision) return { allow: false, reason: 'Tally could not judge this call' };
        return verdictOf(decision);
      },
      async observe(event) {
        await ingest('observe', event, harnessSession);
      },
    }),
    close: async () => undefined,
  };
}

/** The project's open session (or TALLY_SESSION's), else a new one sealed at exit. */
async function ownTarget(
  ctx: CommandContext,
  where: Places,
  named: string | undefined,
  agent: string | undefined,
): Promise<RecordingTarget> {
  const signer = await signerOf(ctx, where);
  const openId = named ?? currentSession(where.state);
  let info = openId ? readSessionInfo(where.state, openId) : undefined;
  const started = info === undefined || info.state !== 'open';
  if (started) {
    const resolved = agent
      ? resolveAgent(
          where,
          ctx.cwd,
          agent,
          defaultTrustedKeys(where).map((k) => k.publicKey),
          new Date(),
        )
      : undefined;
    if (resolved?.warning) ctx.stderr(`tally mcp: warning: ${resolved.warning}\n`);
    const root = where.project ? projectRootFor(where.project) : projectRootFor(ctx.cwd);
    info = (
      await startSession({
        state: where.state,
        root,
        signer,
        ...(resolved ? { agent: resolved.agent } : {}),
        ...(resolved?.certificatePath ? { certificatePath: resolve(resolved.certificatePath) } : {}),
      })
    ).info;
  }
  const open = await openSession({
    state: where.state,
    session: info!,
    signer,
    harness: { env: ctx.env, logger: harnessLogger(ctx) },
  });
  return {
    sink: () => boundarySink(open.boundary, { source: 'mcp' }),
    async close(at) {
      await open.close();
      if (!started) return;
      const closed = await closeSession({
        state: where.state,
        session: readSessionInfo(where.state, info!.id),
        signer,
      });
      at.stderr(`tally mcp: session ${info!.id} sealed: ${closed.packagePath} (${closed.records} records)\n`);
    },
  };
}
