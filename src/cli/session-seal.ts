/**
 * Sealing a session the way `tally session close` does, for every command that seals one (`tally
 * session close`, `tally wrap`'s own session): the recorder is the single writer of a session it
 * holds, so it seals it; payloads a shim spooled while it was down belong in the package too, so a
 * recorder is started to ingest them first; otherwise the log is sealed here, under its lock.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tallyHome } from '../core/home.js';
import type { PublicKeyInput } from '../core/keys.js';
import { expectOk, RecorderClient } from '../recorder/client.js';
import { recorderPaths } from '../recorder/config.js';
import { LEFT_OVER, type SpoolEntry } from '../recorder/spool-file.js';
import { packageCloseSummary } from '../session/close-summary.js';
import { type CloseResult, closeSession } from '../session/lifecycle.js';
import type { Places } from '../session/paths.js';
import type { SessionInfo } from '../session/store.js';
import type { CommandContext } from './command.js';
import { recorderPassphrase, signerOf } from './session-context.js';

export type Sealed = Pick<CloseResult, 'packagePath' | 'records' | 'recovered'>;

/**
 * Whether a spooled payload may belong to this session: one that names it (a shim spools under the
 * run's session), or one that names none (a shim that had no session to name: the recorder puts it
 * in the session open for its project, which may be this one).
 */
function spoolHolds(dir: string, session: string): boolean {
  let names: string[];
  try {
    // A spool file a recorder was killed while ingesting too (its lines are not recorded yet).
    names = readdirSync(dir).filter((name) => name.endsWith('.jsonl') || LEFT_OVER.test(name));
  } catch {
    return false;
  }
  return names.some((name) => {
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch {
      return false;
    }
    return text.split('\n').some((line) => {
      if (line.trim() === '') return false;
      try {
        const named = (JSON.parse(line) as Partial<SpoolEntry>).session;
        return named === undefined || named === session;
      } catch {
        return false; // a line cut short: the ingest drops it too
      }
    });
  });
}

async function closeThroughRecorder(recorder: RecorderClient, session: string): Promise<Sealed> {
  const closed = expectOk(
    await recorder.request('POST', '/sessions/close', { session }),
    'closing the session',
  ) as {
    package: string;
    records: number;
  };
  return { packagePath: closed.package, records: closed.records, recovered: null };
}

/** Seals `session`: through the recorder that holds it (or one started for its spool), else here. */
export async function sealSession(
  ctx: CommandContext,
  where: Places,
  session: SessionInfo,
  options: { reconcileLimit?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<Sealed> {
  const home = tallyHome(ctx.env);
  let recorder = await RecorderClient.holding(home, session.id, ctx.env);
  if (!recorder && spoolHolds(recorderPaths(home).spool, session.id)) {
    const client = await RecorderClient.of(home, ctx.env);
    const secret = await recorderPassphrase(ctx, where);
    await client.ensure({ env: ctx.env, ...(secret ? { passphrase: secret } : {}) });
    recorder = await RecorderClient.holding(home, session.id, ctx.env);
  }
  if (recorder) return closeThroughRecorder(recorder, session.id);
  return closeSession({
    state: where.state,
    session,
    signer: await signerOf(ctx, where),
    ...(options.reconcileLimit ? { reconcileLimit: options.reconcileLimit } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}

/**
 * When the close's own pass compared the tree of `session`, by the record time of its summary
 * (ms since the epoch), read from the package's end and checked with the pinned keys (`trusted`);
 * undefined when the package holds no such summary. A pass older than the close that asked for it
 * ran in an earlier close: the agent can ask for one while it works (docs/security.md, "A close
 * the agent asks for").
 */
export async function comparedAt(
  packagePath: string,
  session: string,
  trusted: readonly PublicKeyInput[],
): Promise<number | undefined> {
  const summary = await packageCloseSummary(packagePath, session, trusted);
  return typeof summary === 'object' ? Date.parse(summary.time) : undefined;
}
