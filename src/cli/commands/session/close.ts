/** `tally session close`: `session.end`, then the log sealed into a package (its path on stdout). */

import { defaultTrustedKeys } from '../../../session/identity.js';
import { resolveSession } from '../../../session/store.js';
import { type Command, parseFlags, printJson } from '../../command.js';
import { placesOf } from '../../session-context.js';
import { comparedAt, sealSession } from '../../session-seal.js';

export const command: Command = {
  summary: 'seal the session into a package (prints its path)',
  usage:
    'usage: tally session close [--session ID] [--json]\n\nPrints the package path on stdout; progress on stderr for long sessions. Exit 1 when the\npackage ends at an earlier close (its tree compared before this one was asked): what changed since is in no receipt.',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
    const where = placesOf(ctx);
    const session = resolveSession(where.state, values.session);
    const asked = Date.now();
    const result = await sealSession(ctx, where, session, {
      onProgress: (done, total) => ctx.stderr(`sealing: ${done} of ${total} records\n`),
    });
    // The tree compared by an earlier close (one the agent asked for, then wrote session.json
    // back to open; or one stopped between its pass and its seal): this package ends there.
    const trusted = defaultTrustedKeys(where).map((k) => k.publicKey);
    const compared = await comparedAt(result.packagePath, session.id, trusted);
    const early = compared !== undefined && compared < asked;
    if (early)
      ctx.stderr(
        `tally session close: the tree was compared at ${new Date(compared).toISOString()}, by a close before this one: what changed since is in no receipt\n`,
      );
    if (values.json)
      printJson(ctx, {
        session: session.id,
        package: result.packagePath,
        records: result.records,
        recovered: result.recovered,
        ...(early ? { compared_before_close: new Date(compared).toISOString() } : {}),
      });
    else {
      if (result.recovered)
        ctx.stderr(
          `recovered a torn last line (${result.recovered.bytes} bytes) into ${result.recovered.quarantinePath}\n`,
        );
      ctx.stderr(`closed session ${session.id}: ${result.records} records sealed\n`);
      ctx.stdout(`${result.packagePath}\n`);
    }
    return early ? 1 : 0;
  },
};
