/** `tally session close`: `session.end`, then the log sealed into a package (its path on stdout). */

import { resolveSession } from '../../../session/store.js';
import { type Command, parseFlags, printJson } from '../../command.js';
import { placesOf } from '../../session-context.js';
import { sealSession } from '../../session-seal.js';

export const command: Command = {
  summary: 'seal the session into a package (prints its path)',
  usage:
    'usage: tally session close [--session ID] [--json]\n\nPrints the package path on stdout; progress on stderr for long sessions.',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
    const where = placesOf(ctx);
    const session = resolveSession(where.state, values.session);
    const result = await sealSession(ctx, where, session, {
      onProgress: (done, total) => ctx.stderr(`sealing: ${done} of ${total} records\n`),
    });
    if (values.json)
      printJson(ctx, {
        session: session.id,
        package: result.packagePath,
        records: result.records,
        recovered: result.recovered,
      });
    else {
      if (result.recovered)
        ctx.stderr(
          `recovered a torn last line (${result.recovered.bytes} bytes) into ${result.recovered.quarantinePath}\n`,
        );
      ctx.stderr(`closed session ${session.id}: ${result.records} records sealed\n`);
      ctx.stdout(`${result.packagePath}\n`);
    }
    return 0;
  },
};
