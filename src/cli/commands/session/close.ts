/** `tally session close`: `session.end`, then the log sealed into a package (its path on stdout). */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tallyHome } from '../../../core/home.js';
import { expectOk, RecorderClient } from '../../../recorder/client.js';
import { recorderPaths } from '../../../recorder/config.js';
import { LEFT_OVER } from '../../../recorder/spool-file.js';
import type { CloseResult } from '../../../session/lifecycle.js';
import { closeSession } from '../../../session/lifecycle.js';
import { resolveSession } from '../../../session/store.js';
import { type Command, parseFlags, printJson } from '../../command.js';
import { placesOf, recorderPassphrase, signerOf } from '../../session-context.js';

export const command: Command = {
  summary: 'seal the session into a package (prints its path)',
  usage:
    'usage: tally session close [--session ID] [--json]\n\nPrints the package path on stdout; progress on stderr for long sessions.',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
    const where = placesOf(ctx);
    const session = resolveSession(where.state, values.session);
    // The recorder is the single writer of a session it holds: it seals it. Payloads a shim spooled
    // while it was down belong in the package too: a recorder started now ingests them first.
    const home = tallyHome(ctx.env);
    let recorder = await RecorderClient.holding(home, session.id, ctx.env);
    if (!recorder && spoolHolds(recorderPaths(home).spool, session.id)) {
      const client = await RecorderClient.of(home, ctx.env);
      const secret = await recorderPassphrase(ctx, where);
      await client.ensure({ env: ctx.env, ...(secret ? { passphrase: secret } : {}) });
      recorder = await RecorderClient.holding(home, session.id, ctx.env);
    }
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

/** Whether a spooled payload names this session (a shim spools under the run's session). */
function spoolHolds(dir: string, session: string): boolean {
  let names: string[];
  try {
    // A spool file a recorder was killed while ingesting too (its lines are not recorded yet).
    names = readdirSync(dir).filter((name) => name.endsWith('.jsonl') || LEFT_OVER.test(name));
  } catch {
    return false;
  }
  const named = `"session":${JSON.stringify(session)}`;
  return names.some((name) => {
    try {
      return readFileSync(join(dir, name), 'utf8').includes(named);
    } catch {
      return false;
    }
  });
}

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
