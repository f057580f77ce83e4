/**
 * `tally ahp serve`: run a policy backend over stdio or HTTP until stdin ends or a signal — the
 * rule-file policy, or Tally's certificate judge (`--certificate`), the one a session dispatches
 * in-process first.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { createBackend } from '../../../ahp/backend/kit.js';
import { parseRules, rulesHandler } from '../../../ahp/backend/rules.js';
import { certificateHandler } from '../../../boundary/certificate-backend.js';
import { type AgentCertificate, verifyCertificate } from '../../../evidence/certificate.js';
import { certificatePathFor, readCertificateFile } from '../../../session/agents.js';
import { defaultTrustedKeys } from '../../../session/identity.js';
import { type Command, type CommandContext, FailureError, parseFlags, UsageError } from '../../command.js';
import { placesOf } from '../../session-context.js';

export const command: Command = {
  summary: 'run a policy backend: a rule file, or the certificate judge',
  usage: [
    'usage: tally ahp serve (--stdio | --port N [--host H]) (--rules FILE | --certificate FILE [--root DIR]) [--json]',
    '',
    '  --stdio        speak newline-delimited JSON-RPC on stdin/stdout (diagnostics on stderr)',
    '  --port N       listen for HTTP POSTs on N (0 picks a free port, printed on start)',
    '  --host H       address to bind (default 127.0.0.1)',
    '  --rules FILE   ordered rules, first match wins (see docs/ahp-transports.md)',
    '  --certificate FILE  judge tool.before by this agent certificate (it must verify with a pinned',
    '                 ship key); relative paths are judged against --root (default: the current dir).',
    '                 A registration may list this entry to place the judge or set its deadline: a',
    '                 session runs it in-process, fail-closed, with its own bound certificate',
    '  --json         with --port, print {"port","url"} on stdout once listening',
    '',
    'Task and workspace lineage is checked across the events received (docs/ahp.md).',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      stdio: { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
      rules: { type: 'string' },
      certificate: { type: 'string' },
      root: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if ((values.rules === undefined) === (values.certificate === undefined))
      throw new UsageError('give exactly one of --rules FILE or --certificate FILE');
    // parseArgs leaves an absent boolean flag undefined, not false.
    if ((values.stdio === true) === (values.port !== undefined))
      throw new UsageError('give exactly one of --stdio or --port N');
    const { handler, what } =
      values.certificate !== undefined
        ? certificateBackend(ctx, values.certificate, values.root)
        : await rulesBackend(ctx, values.rules!, values.stdio ? 'stdio' : 'http');
    // One process is one receiver: it judges task/workspace lineage across the events it gets.
    const kit = createBackend(handler, { lineage: true });
    const stopped = new Promise<void>((done) => {
      const stop = () => done();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });

    if (values.stdio) {
      ctx.stderr(`tally ahp serve: ${what} on stdio\n`);
      await Promise.race([kit.serveStdio(process.stdin, process.stdout), stopped]);
      process.stdin.pause();
      return 0;
    }
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be 0..65535, got '${values.port}'`);
    const host = values.host ?? '127.0.0.1';
    // Refuse an over-limit declared body before Node would send `100 Continue` for it.
    const server = createServer(kit.http).on('checkContinue', kit.checkContinue);
    await new Promise<void>((ok, fail) => {
      server.once('error', (e: NodeJS.ErrnoException) =>
        fail(new UsageError(`cannot listen on ${host}:${port}: ${e.code}`)),
      );
      server.listen(port, host, () => ok());
    });
    const address = server.address();
    const bound = typeof address === 'object' && address !== null ? address.port : port;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`;
    ctx.stderr(`tally ahp serve: ${what}, listening on ${url} (port ${bound})\n`);
    if (values.json) ctx.stdout(`${JSON.stringify({ port: bound, url })}\n`);
    await stopped;
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    ctx.stderr('tally ahp serve: stopped\n');
    return 0;
  },
};

async function rulesBackend(ctx: CommandContext, file: string, transport: 'stdio' | 'http') {
  const path = resolve(ctx.cwd, file);
  let text: Buffer;
  try {
    text = await readFile(path);
  } catch (error) {
    throw new UsageError(`cannot read rules file ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
  const rules = parseRules(text);
  return { handler: rulesHandler(rules, transport), what: `${rules.length} rule(s)` };
}

function certificateBackend(ctx: CommandContext, file: string, root: string | undefined) {
  const where = placesOf(ctx);
  const path = certificatePathFor(where, ctx.cwd, file);
  let certificate: AgentCertificate;
  try {
    certificate = verifyCertificate(
      readCertificateFile(path),
      defaultTrustedKeys(where).map((k) => k.publicKey),
    ).certificate;
  } catch (error) {
    throw new FailureError(
      `the certificate ${path} does not verify with a pinned ship key: ${(error as Error).message}`,
    );
  }
  const base = resolve(ctx.cwd, root ?? '.');
  const handler = certificateHandler({
    certificate,
    frame: { root: base, cwd: base },
    now: () => new Date(),
  });
  return { handler, what: `the certificate judge of ${certificate.agent.name} (${certificate.serial})` };
}
