/** `tally ahp serve`: run the rule-file policy backend over stdio or HTTP until stdin ends or a signal. */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { createBackend } from '../../../ahp/backend/kit.js';
import { parseRules, rulesHandler } from '../../../ahp/backend/rules.js';
import { type Command, parseFlags, UsageError } from '../../command.js';

export const command: Command = {
  summary: 'run a rule-file policy backend',
  usage: [
    'usage: tally ahp serve (--stdio | --port N [--host H]) --rules FILE [--json]',
    '',
    '  --stdio        speak newline-delimited JSON-RPC on stdin/stdout (diagnostics on stderr)',
    '  --port N       listen for HTTP POSTs on N (0 picks a free port, printed on start)',
    '  --host H       address to bind (default 127.0.0.1)',
    '  --rules FILE   ordered rules, first match wins (see docs/ahp-transports.md)',
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
      json: { type: 'boolean' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (values.rules === undefined) throw new UsageError('--rules FILE is required');
    // parseArgs leaves an absent boolean flag undefined, not false.
    if ((values.stdio === true) === (values.port !== undefined))
      throw new UsageError('give exactly one of --stdio or --port N');
    const path = resolve(ctx.cwd, values.rules);
    let text: Buffer;
    try {
      text = await readFile(path);
    } catch (error) {
      throw new UsageError(`cannot read rules file ${path}: ${(error as NodeJS.ErrnoException).code}`);
    }
    const rules = parseRules(text);
    // One process is one receiver: it judges task/workspace lineage across the events it gets.
    const kit = createBackend(rulesHandler(rules, values.stdio ? 'stdio' : 'http'), { lineage: true });
    const stopped = new Promise<void>((done) => {
      const stop = () => done();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });

    if (values.stdio) {
      ctx.stderr(`tally ahp serve: ${rules.length} rule(s) on stdio\n`);
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
    ctx.stderr(`tally ahp serve: ${rules.length} rule(s), listening on ${url} (port ${bound})\n`);
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
