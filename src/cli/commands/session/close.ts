/** `tally session close`: `session.end`, then the log sealed into a package (its path on stdout). */

import { tallyHome } from '../../../core/home.js';
import { expectOk, RecorderClient } from '../../../recorder/client.js';
import type { CloseResult } from '../../../session/lifecycle.js';
import { closeSession } from '../../../session/lifecycle.js';
import { resolveSession } from '../../../session/store.js';
import { type Command, parseFlags, printJson } from '../../command.js';
import { placesOf, signerOf } from '../../session-context.js';

export const command: Command = {
  summary: 'seal the session into a package (prints its path)',
  usage:
    'usage: tally session close [--session ID] [--json]\n\nPrints the package path on stdout; progress on stderr for long sessions.',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
    const where = placesOf(ctx);
    const session = resolveSession(where.state, values.session);
    // The recorder is the single writer of a session it holds: it seals it.
    const recorder = await RecorderClient.holding(tallyHome(ctx.env), session.id, ctx.env);
    const result = recorder
      ? await closeThroughRecorder(recorder, session.id)
      : await closeSession({
          state: where.state,
          session,
          signer: await signerOf(ctx, where),
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

async function closeThroughRecorder(
  recorder: RecorderClient,
  session: string,
): Promise<Pick<CloseResult, 'packagePath' | 'records' | 'recovered'>> {
  const closed = expectOk(
    await recorder.request('POST', '/sessions/close', { session }),
    'closing the session',
  ) as {
    package: string;
    records: number;
  };
  return { packagePath: closed.package, records: closed.records, recovered: null };
}
