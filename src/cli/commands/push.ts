/** `tally push PKG|CERT --hub URL`: register the ship on first contact, then upload. Never automatic. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseJson } from '../../core/canonical.js';
import { packageHeader } from '../../evidence/package/grammar.js';
import { HubClientError } from '../../hub-client/http.js';
import { pushCertificate, pushPackage, registerShip } from '../../hub-client/push.js';
import { type Command, FailureError, parseFlags, printJson, UsageError } from '../command.js';
import { signerOf } from '../session-context.js';

export const command: Command = {
  summary: 'upload a package or an agent certificate to a hub',
  usage: [
    'usage: tally push FILE --hub URL [--certificate SERIAL] [--json]',
    '',
    'FILE is a session package (.tally) or an agent certificate (.agent.json). The request is signed',
    'with the ship key (RFC 9421); the ship is registered on first contact. With --certificate the hub',
    'cross-verifies the package against that certificate (push the certificate first).',
    'Exit 0 stored (or already there with the same bytes), 1 the hub refused it, 2 usage or network error.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      hub: { type: 'string' },
      certificate: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (values.hub === undefined) throw new UsageError('--hub URL is required');
    if (positionals.length !== 1) throw new UsageError('give exactly one file to push');
    const path = resolve(ctx.cwd, positionals[0]!);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`);
    }
    const signer = await signerOf(ctx);
    const ship = { keyId: signer.keyId, privateKey: signer.privateKey };
    try {
      const registered = await registerShip(values.hub, ship);
      if (registered.status === 'created')
        ctx.stderr(`registered ship ${registered.ship_id} on ${values.hub}\n`);
      let result: Record<string, unknown>;
      let what: string;
      let session: string | null = null;
      try {
        session = packageHeader(bytes).session;
      } catch {
        session = null;
      }
      if (session !== null) {
        what = `package ${session}`;
        result = await pushPackage(
          values.hub,
          session,
          bytes,
          ship,
          values.certificate ? { certificate: values.certificate } : {},
        );
      } else {
        let envelope: unknown;
        try {
          envelope = parseJson(bytes.toString('utf8'));
        } catch {
          throw new UsageError(`${path} is neither a package nor a certificate`);
        }
        what = 'certificate';
        result = await pushCertificate(values.hub, envelope, ship);
      }
      if (values.json) printJson(ctx, { ok: true, file: path, hub: values.hub, ...result });
      else ctx.stderr(`${what}: ${result.status} on ${values.hub}, log index ${result.log_index}\n`);
      return 0;
    } catch (error) {
      if (error instanceof HubClientError && error.code === 'refused') {
        if (values.json) {
          printJson(ctx, { ok: false, file: path, hub: values.hub, status: error.status, ...error.body });
          ctx.stderr(`tally push: ${error.message}\n`);
          return 1;
        }
        throw new FailureError(error.message);
      }
      if (error instanceof HubClientError) throw new UsageError(error.message);
      throw error;
    }
  },
};
