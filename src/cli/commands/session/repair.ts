/**
 * `tally session repair`: sets aside bytes of the live log that are not records of its chain (a
 * foreign or corrupt line) and continues the chain with a `tally.log.repaired` record.
 */

import { tallyHome } from '../../../core/home.js';
import { RecorderClient } from '../../../recorder/client.js';
import { repairSession } from '../../../session/repair.js';
import { resolveSession } from '../../../session/store.js';
import { type Command, FailureError, parseFlags, printJson } from '../../command.js';
import { placesOf, signerOf } from '../../session-context.js';

export const command: Command = {
  summary: 'set aside foreign or corrupt bytes of the live log and continue its chain',
  usage:
    'usage: tally session repair [--session ID] [--json]\n\nBytes that are not records of the chain go to events.log.foreign-<offset>; a tally.log.repaired record names their ranges and digest. Nothing recorded is dropped: a repair that would drop a record the chain head names is refused.',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
    const where = placesOf(ctx);
    const session = resolveSession(where.state, values.session);
    if (await RecorderClient.holding(tallyHome(ctx.env), session.id, ctx.env))
      throw new FailureError(
        `the recorder holds session ${session.id}: stop it first (tally recorder stop), then repair`,
      );
    const result = await repairSession({ state: where.state, session, signer: await signerOf(ctx, where) });
    if (values.json) printJson(ctx, { session: session.id, ...result });
    else if (!result.repaired) ctx.stderr(`session ${session.id}: the log is whole; nothing to repair\n`);
    else {
      for (const range of result.ranges)
        ctx.stderr(`set aside ${range.bytes} bytes at byte ${range.offset}\n`);
      if (result.quarantinePath) ctx.stderr(`  into ${result.quarantinePath} (${result.digest})\n`);
      if (result.headMissing) ctx.stderr('the chain head file was missing: re-established from the log\n');
      ctx.stderr(
        `session ${session.id}: chain continued from record ${result.lastSeq}; tally.log.repaired is record ${result.seq}\n`,
      );
    }
    return 0;
  },
};
