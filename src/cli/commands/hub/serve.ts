/** `tally hub serve`: open the store, load the hub key, listen until a signal. */
import { join, resolve } from 'node:path';
import { tallyHome } from '../../../core/home.js';
import type { KeyError } from '../../../core/keys.js';
import { hubIdentity, loadHubKey } from '../../../hub/identity.js';
import { DEFAULT_LIMITS, type HubLimits } from '../../../hub/server/limits.js';
import { createHubServer, listen } from '../../../hub/server/server.js';
import { isPostgresUrl, openHubStore } from '../../../hub/store/open.js';
import { redact } from '../../../hub/store/postgres.js';
import { type Command, parseFlags, UsageError } from '../../command.js';
import { passphrase } from '../../session-context.js';

function positive(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${flag} must be a positive integer, got '${text}'`);
  return n;
}

export const command: Command = {
  summary: 'run a hub',
  usage: [
    'usage: tally hub serve [--db FILE | --db postgres://…] [--key FILE] [--origin NAME] [--host H] [--port N]',
    '                       [--public-url URL] [--trust-proxy] [--rate-ip N] [--rate-key N] [--max-package BYTES] [--json]',
    '',
    '  --db          SQLite file (default $TALLY_HOME/hub/hub.db) or a PostgreSQL URL (replicas share one)',
    '  --key         the hub key file (default $TALLY_HOME/keys/hub, created on first start); replicas share it',
    '  --origin      the log origin and checkpoint key name (default tally.hub/<key fingerprint>)',
    '  --host/--port address to listen on (default 127.0.0.1, port 0 picks a free one)',
    '  --public-url  the URL clients reach the hub at (behind a load balancer): signatures must name it',
    '  --trust-proxy take the client address from X-Forwarded-For (only behind a proxy you run)',
    '  --rate-ip N   requests a minute per client address (default 600); --rate-key N signed writes per key (120)',
    '  --json        print {"url","port","origin","verifier_key","store"} on stdout once listening',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      db: { type: 'string' },
      key: { type: 'string' },
      origin: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'public-url': { type: 'string' },
      'trust-proxy': { type: 'boolean' },
      'rate-ip': { type: 'string' },
      'rate-key': { type: 'string' },
      'max-package': { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const home = tallyHome(ctx.env);
    const port = Number(values.port ?? '0');
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be 0..65535, got '${values.port}'`);
    let publicUrl: URL | null = null;
    if (values['public-url'] !== undefined) {
      try {
        publicUrl = new URL(values['public-url']);
      } catch {
        throw new UsageError(`--public-url is not a URL: ${values['public-url']}`);
      }
    }
    const limits: HubLimits = {
      ...DEFAULT_LIMITS,
      perIp: positive(values['rate-ip'], '--rate-ip', DEFAULT_LIMITS.perIp),
      perKey: positive(values['rate-key'], '--rate-key', DEFAULT_LIMITS.perKey),
      packageBytes: positive(values['max-package'], '--max-package', DEFAULT_LIMITS.packageBytes),
    };
    const keyOptions = { home, ...(values.key !== undefined ? { file: resolve(ctx.cwd, values.key) } : {}) };
    let key: ReturnType<typeof loadHubKey>;
    try {
      key = loadHubKey(keyOptions);
    } catch (error) {
      // An encrypted hub key: its passphrase comes the way the ship key's does (a terminal or
      // TALLY_PASSPHRASE_FD), never from the environment.
      if ((error as KeyError).code !== 'passphrase-required') throw error;
      const given = await passphrase(ctx, 'passphrase for the hub key: ');
      key = loadHubKey({ ...keyOptions, ...(given !== undefined ? { passphrase: given } : {}) });
    }
    if (key.created) ctx.stderr(`tally hub serve: created the hub key ${key.path}\n`);
    const identity = hubIdentity(key.privateKey, values.origin);
    const db =
      values.db === undefined
        ? join(home, 'hub', 'hub.db')
        : isPostgresUrl(values.db)
          ? values.db
          : resolve(ctx.cwd, values.db);
    const store = await openHubStore(db);
    await store.open({ origin: identity.origin, publicKey: identity.publicKey }, identity.signCheckpoint);
    const server = createHubServer(
      { store, identity, limits, publicUrl, now: () => new Date() },
      {
        trustProxy: values['trust-proxy'] === true,
        onError: (error) => ctx.stderr(`tally hub serve: ${(error as Error).stack ?? String(error)}\n`),
      },
    );
    const host = values.host ?? '127.0.0.1';
    let address: Awaited<ReturnType<typeof listen>>;
    try {
      address = await listen(server, port, host);
    } catch (error) {
      await store.close();
      throw new UsageError(`cannot listen on ${host}:${port}: ${(error as NodeJS.ErrnoException).code}`);
    }
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/`;
    ctx.stderr(
      `tally hub serve: ${store.dialect} ${isPostgresUrl(db) ? redact(db) : db}, log ${identity.origin}, listening on ${url}\n` +
        `  verifier key ${identity.verifierKey}\n`,
    );
    if (values.json)
      ctx.stdout(
        `${JSON.stringify({ url, port: address.port, origin: identity.origin, verifier_key: identity.verifierKey, store: store.dialect })}\n`,
      );
    await new Promise<void>((done) => {
      process.once('SIGTERM', done);
      process.once('SIGINT', done);
    });
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    await store.close();
    ctx.stderr('tally hub serve: stopped\n');
    return 0;
  },
};
