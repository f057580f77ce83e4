/**
 * Ingesting the spool when the recorder starts: every payload a shim could not deliver is
 * translated and recorded as observed (the agent already had its answer: the one its failure
 * policy gave), in its session, once — an id already recorded is skipped (spool-seen.ts says where
 * it is looked for).
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../ahp/transports/options.js';
import { adapterOf } from '../capture/adapters.js';
import { GitError } from '../core/git.js';
import { appendRegularFileSync, RegularFileError, readRegularFileSync } from '../core/regular-file.js';
import type { RecorderPaths } from './config.js';
import type { SessionRegistry } from './registry.js';
import { LEFT_OVER, SHIM_ANSWERER, SHIM_DENIAL, type SpoolEntry } from './spool-file.js';
import { SpoolSeen } from './spool-seen.js';

/**
 * The one answer a spooled payload may carry: the shim's fail-closed denial. The spool sits in
 * TALLY_HOME, which the agent can write, so a line naming any other answer or answerer (a
 * certificate's denial, an approval) is not taken as one; its payload is still recorded.
 */
function shimAnswer(answered: SpoolEntry['answered']): SpoolEntry['answered'] {
  return answered?.decision === 'deny' && answered.by === SHIM_ANSWERER
    ? { decision: 'deny', by: SHIM_ANSWERER, reason: SHIM_DENIAL }
    : undefined;
}

/** The most one spool file may hold (each payload is at most the recorder's 16 MiB body limit). */
const SPOOL_FILE_LIMIT = 1024 * 1024 * 1024;

/**
 * The repository a directory is in, as far as the file system says (the nearest folder above it
 * holding `.git`), without asking git: the key under which one git that did not answer in time
 * keeps the rest of that repository's lines from waiting for their own.
 */
function repositoryOf(cwd: string): string {
  let dir = resolve(cwd);
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return resolve(cwd);
    dir = parent;
  }
}

export async function ingestSpool(
  paths: RecorderPaths,
  registry: SessionRegistry,
  logger: Logger,
): Promise<number> {
  if (!existsSync(paths.spool)) return 0;
  let ingested = 0;
  const seen = new SpoolSeen(logger);
  // Repositories whose git did not answer in time: their other lines are kept without a wait each.
  const stalled = new Map<string, string>();
  const files = readdirSync(paths.spool);
  // A recorder killed while ingesting left the rest of a spool file under the name it took it by
  // (`<channel>.jsonl.ingesting-…`): ingested first, as it stands (what it had recorded is skipped
  // by id), before the lines spooled since. Only the recorder listening on the port ingests, so no
  // other one is still reading it.
  const leftovers = files
    .filter((f) => LEFT_OVER.test(f))
    .sort()
    .map((f) => ({ name: f.slice(0, f.indexOf('.ingesting-')), taken: join(paths.spool, f), left: true }));
  const fresh = files
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((name) => ({
      name,
      taken: join(paths.spool, `${name}.ingesting-${process.pid}-${Date.now()}`),
      left: false,
    }));
  for (const { name, taken, left } of [...leftovers, ...fresh]) {
    if (!left) renameSync(join(paths.spool, name), taken);
    // Lines that could not be recorded now (a key that cannot sign, a session that cannot open)
    // go back to the spool for the next start: an acknowledged payload is not dropped.
    const kept: string[] = [];
    let text: string;
    try {
      text = readRegularFileSync(taken, SPOOL_FILE_LIMIT).toString('utf8');
    } catch (error) {
      if (!(error instanceof RegularFileError)) throw error;
      // A FIFO or device holds no spooled line: removed. A spool too large to read stays, aside.
      logger('warn', `spool ${name}: ${error.message}${error.code === 'too-large' ? ' (left there)' : ''}`);
      if (error.code === 'not-regular') rmSync(taken, { force: true });
      continue;
    }
    // A last line without its newline is one a shim is still writing (it opened the file before it
    // was taken: the rest of its line goes into the file taken, not into a new spool) or one a shim
    // killed mid-write left cut short. Only complete lines are read. A file taken now stays, under
    // the name it was taken by, for the next start to read whole (what is recorded now is then
    // skipped by id); in a file left from before, no one is still writing: the cut line is dropped.
    const complete = text.lastIndexOf('\n') + 1;
    const unfinished = text.slice(complete).trim() !== '';
    if (unfinished)
      logger(
        'warn',
        `spool ${name}: its last line (${text.length - complete} bytes) has no end${left ? ', cut short: dropped' : ' yet: the file is left for the next start'}`,
      );
    for (const line of text.slice(0, complete).split('\n')) {
      if (line.trim() === '') continue;
      let repository: string | undefined;
      try {
        const entry = JSON.parse(line) as SpoolEntry;
        const adapter = adapterOf(entry.channel);
        if (adapter === undefined) throw new Error(`no translator for channel ${entry.channel}`);
        const captured = adapter.translate(entry.payload, entry.id);
        repository = captured.cwd === undefined ? undefined : repositoryOf(captured.cwd);
        const stall = repository === undefined ? undefined : stalled.get(repository);
        if (stall !== undefined)
          throw new Error(`not tried, git in ${repository} did not answer for an earlier line (${stall})`);
        // Recorded already, by a recorder that stopped before it answered: not recorded again, in a
        // new session, after the one it is in was sealed; a session whose log it ended is sealed.
        const cwd = captured.cwd;
        const earlier =
          cwd === undefined
            ? undefined
            : await seen.find(registry.statesOf(cwd), entry.id, Date.parse(entry.received_at), left, (id) =>
                registry.get(id),
              );
        if (earlier !== undefined) {
          logger('info', `spool ${name}: ${entry.id} is already recorded in session ${earlier.session}`);
          await registry.finishEnded(cwd!, earlier.state, earlier.session);
          continue;
        }
        const held = await registry.forEvent(captured, {
          ...(entry.session ? { session: entry.session } : {}),
          ...(typeof entry.agent === 'string' && /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(entry.agent)
            ? { agent: entry.agent }
            : {}),
        });
        if ((await seen.hold(held)).has(entry.id)) continue;
        const agent = registry.attribution(held, captured.agent, entry.channel);
        const answered = shimAnswer(entry.answered);
        if (entry.answered !== undefined && answered === undefined)
          logger(
            'warn',
            `spool ${name}: ${entry.id} names an answer the shim never gives; recorded without it`,
          );
        await held.open.boundary.observe(captured.event, {
          source: 'hook',
          agent,
          ...(answered ? { answered } : {}),
        });
        held.seen.add(entry.id);
        ingested += 1;
        // As live: a harness session's end seals the session opened on the spot that it recorded into.
        await registry.sealIfEnded(held, captured.nativeEvent, adapter.endEvent);
      } catch (error) {
        if (error instanceof GitError && error.code === 'timeout' && repository !== undefined)
          stalled.set(repository, error.message);
        logger(
          'warn',
          `spool ${name}: a line could not be ingested (kept for the next start): ${(error as Error).message}`,
        );
        kept.push(line);
      }
    }
    // Its kept lines stay in it too.
    if (unfinished && !left) continue;
    try {
      if (kept.length > 0) appendRegularFileSync(join(paths.spool, name), `${kept.join('\n')}\n`, 0o600);
    } catch (error) {
      logger(
        'warn',
        `spool ${name}: ${kept.length} line(s) could not be put back: ${(error as Error).message}`,
      );
      continue;
    }
    rmSync(taken, { force: true });
  }
  return ingested;
}
