/**
 * `tally wrap [--agent NAME] [--max-files N] [--json] -- <cmd…>`: runs a command with inherited
 * stdio and records what it did — one shell call (judged before it runs: a forbidden command does
 * not run), its exit code and duration, and the files it created, modified, deleted or renamed,
 * found by comparing content-hash snapshots of the project's tree (`.gitignore` respected) taken
 * before and after. Inside the project's open session it records into it (through the recorder
 * when the recorder holds it); otherwise it records a session of its own and seals it.
 * Exit: the command's own code (a signal as 128+n); 1 when the command was forbidden.
 */
import { catalogueEntry } from '../../ahp/protocol/catalogue.js';
import type { BoundaryDecision } from '../../boundary/boundary.js';
import { DEFAULT_GIT_TIMEOUT_MS, deadlineAfter } from '../../capture/reconcile/deadline.js';
import { ReconcileError } from '../../capture/reconcile/error.js';
import { fileChangedEvent } from '../../capture/reconcile/events.js';
import { repositoryOf } from '../../capture/reconcile/git.js';
import { pathOut } from '../../capture/reconcile/paths.js';
import { diffSnapshots } from '../../capture/reconcile/trees.js';
import { DEFAULT_FILE_LIMIT, snapshotTree, type TreeSnapshot } from '../../capture/reconcile/workspace.js';
import {
  afterEvent,
  beforeEvent,
  commandLine,
  FORWARDED,
  type Ran,
  runInherited,
  WRAP_SOURCE,
  WRAP_URI,
  wrapCallId,
} from '../../capture/wrap/wrap.js';
import type { CanonicalEvent } from '../../core/event.js';
import { tallyHome } from '../../core/home.js';
import { processAlive } from '../../core/process-alive.js';
import { redactErrorMessage, redactText } from '../../evidence/redact.js';
import { expectOk, RecorderClient } from '../../recorder/client.js';
import { certificatePathFor } from '../../session/agents.js';
import { recordEvent, startSession } from '../../session/lifecycle.js';
import { type Places, sessionRootFor } from '../../session/paths.js';
import { currentSession, readSessionInfo, SessionError, type SessionInfo } from '../../session/store.js';
import { type Command, type CommandContext, parseFlags, printJson, UsageError } from '../command.js';
import { harnessLogger } from '../harness-logger.js';
import { placesOf, signerOf } from '../session-context.js';
import { sealSession } from '../session-seal.js';
import { joinWrapSession, leaveWrapSession, otherWraps } from '../wrap-participants.js';

/** Where the events go: the recorder holding the session, or the session's log directly. */
type Sink = (event: CanonicalEvent) => Promise<BoundaryDecision | undefined>;

function interceptable(event: CanonicalEvent): boolean {
  return catalogueEntry(event.type)?.interceptable === true;
}

async function sinkFor(ctx: CommandContext, state: string, session: SessionInfo): Promise<Sink> {
  const recorder = await RecorderClient.holding(tallyHome(ctx.env), session.id, ctx.env);
  if (recorder) {
    return async (event) => {
      const reply = expectOk(
        await recorder.request('POST', '/ingest', {
          source: WRAP_SOURCE,
          mode: interceptable(event) ? 'decide' : 'observe',
          event,
          cwd: ctx.cwd,
          session: session.id,
          harness_session: `wrap-${session.id}`,
        }),
        'recording the command',
      ) as { decision: BoundaryDecision | null };
      return reply.decision ?? undefined;
    };
  }
  const signer = await signerOf(ctx);
  return async (event) =>
    (
      await recordEvent({
        state,
        session: readSessionInfo(state, session.id),
        signer,
        event,
        source: WRAP_SOURCE,
        harness: { env: ctx.env, logger: harnessLogger(ctx) },
      })
    ).decision;
}

/**
 * The tree once the command ended; undefined when it cannot be listed now (the command can plant a
 * FIFO where git reads its index): said, and the run still ends with the command's own exit code
 * and its own session sealed, whose close records the failure (`workspace_reconciled`).
 */
async function afterSnapshot(
  ctx: CommandContext,
  root: string,
  inGit: boolean,
  limit: number,
  before: TreeSnapshot,
  ms: number,
): Promise<TreeSnapshot | undefined> {
  try {
    return await snapshotTree(root, inGit, limit, {
      known: [...before.files.keys(), ...before.unread.keys()],
      deadline: deadlineAfter(ms),
    });
  } catch (error) {
    if (!(error instanceof ReconcileError)) throw error;
    ctx.stderr(`tally wrap: the files the command changed could not be compared: ${error.message}\n`);
    return undefined;
  }
}

/** The pid of the `tally wrap` that opened the session to seal it itself, when one did. */
function wrapOwner(info: SessionInfo): number | undefined {
  const pid = info.owner?.command === 'wrap' ? info.owner.pid : undefined;
  return Number.isSafeInteger(pid) && (pid as number) > 0 ? pid : undefined;
}

/** A flag's whole number from `min` to `max` (`unit` names what it counts), `fallback` when not given. */
function wholeNumber(
  value: string | undefined,
  flag: string,
  fallback: number,
  [min, max]: readonly [number, number],
  unit = '',
): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`${flag}: '${value}' is not a whole number ${unit}from ${min} to ${max}`);
  return Number(value);
}

const COUNT = [1, 100_000_000] as const;

/** What recording the command's end found. */
interface Outcome {
  changes: number;
  skipped: number;
  unreadable: string[];
  compared: boolean;
  stillRunning?: boolean;
}

/** The command's end and the files it changed, recorded into the session (unless it closed it). */
async function recordEnd(
  ctx: CommandContext,
  run: {
    where: Places;
    session: SessionInfo;
    call: string;
    text: string;
    root: string;
    inGit: boolean;
    limit: number;
    ms: number;
    before: TreeSnapshot;
    ran: Ran;
  },
): Promise<Outcome> {
  const { where, session, before } = run;
  const outcome: Outcome = { changes: 0, skipped: before.skipped, unreadable: [], compared: false };
  // The command can close the session itself (`tally session close` in a script): that close
  // compared the tree then; what the command did after it is recorded nowhere, and said so.
  if (readSessionInfo(where.state, session.id).state !== 'open') {
    ctx.stderr(
      `tally wrap: session ${session.id} was closed while the command ran: the command's end and the files it changed after that close are not recorded\n`,
    );
    return outcome;
  }
  // Asked again: the command may have started a recorder that now holds the session (a hook it ran).
  const sink = await sinkFor(ctx, where.state, session);
  await sink(afterEvent(run.call, run.text, ctx.cwd, session.id, run.ran));
  const after = await afterSnapshot(ctx, run.root, run.inGit, run.limit, before, run.ms);
  const diff = after ? diffSnapshots(before, after) : undefined;
  if (diff === undefined) return outcome;
  outcome.skipped = diff.skipped;
  outcome.unreadable = diff.unreadable.map((u) => pathOut(u.raw).path);
  for (const change of diff.changes) {
    await sink(
      fileChangedEvent(change, { session: session.id, time: new Date().toISOString(), source: WRAP_URI }),
    );
    outcome.changes++;
  }
  outcome.compared = true;
  return outcome;
}

/**
 * A session of wrap's own (or one it joined), sealed when no other wrap still records into it; its
 * package when it was sealed, by this wrap or by the close that ended it under the command.
 */
async function sealOwn(
  ctx: CommandContext,
  where: Places,
  id: string,
  limit: number,
): Promise<string | undefined> {
  const others = leaveWrapSession(where.state, id);
  const info = readSessionInfo(where.state, id);
  if (info.state !== 'open') return info.package;
  if (others.length > 0) {
    ctx.stderr(
      `tally wrap: session ${id} is left for the tally wrap still recording into it (pid ${others[0]}) to seal\n`,
    );
    return undefined;
  }
  try {
    return (await sealSession(ctx, where, info, { reconcileLimit: limit })).packagePath;
  } catch (error) {
    // Another wrap of the session finishing at the same moment sealed it first.
    if (error instanceof SessionError && error.code === 'already-closed')
      return readSessionInfo(where.state, id).package;
    throw error;
  }
}

const DEFAULT_WAIT_S = 5;

export const command: Command = {
  summary: 'run a command and record what it did (process, file changes)',
  usage: [
    'usage: tally wrap [--agent NAME] [--max-files N] [--max-seconds S] [--wait S] [--json] -- <command…>',
    '',
    'Runs the command with inherited stdio and records it: the command (redacted), cwd, exit code and',
    'duration, and every file it created, modified, deleted or renamed (content hashes of the tree',
    'before and after; .gitignore respected; at most N files hashed, default 100000, the rest counted;',
    'each reading of the tree stops after S seconds, default 30, and a file not read by then is',
    'reported unreadable). Once the command exits, processes it left running are waited for up to',
    '--wait seconds (default 5; 0: not at all), then the tree is compared and any still running said.',
    "Inside the project's open session it records into it; otherwise into a session of its own, sealed",
    "at the end (under NAME's certificate with --agent). A command the certificate forbids does not run.",
    'Exit: the command’s own code (a signal as 128+n), 1 when it was forbidden.',
  ].join('\n'),
  async run(argv, ctx) {
    const dash = argv.indexOf('--');
    if (dash < 0 || dash === argv.length - 1) throw new UsageError('give the command after --');
    const { values, positionals } = parseFlags(argv.slice(0, dash), {
      agent: { type: 'string' },
      'max-files': { type: 'string' },
      'max-seconds': { type: 'string' },
      wait: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 0)
      throw new UsageError(`unexpected argument '${positionals[0]}' (the command goes after --)`);
    const limit = wholeNumber(values['max-files'], '--max-files', DEFAULT_FILE_LIMIT, COUNT);
    const ms =
      wholeNumber(values['max-seconds'], '--max-seconds', DEFAULT_GIT_TIMEOUT_MS / 1000, COUNT) * 1000;
    const lingerMs = wholeNumber(values.wait, '--wait', DEFAULT_WAIT_S, [0, 3600], 'of seconds ') * 1000;
    const cmd = argv.slice(dash + 1);
    if (cmd[0] === '') throw new UsageError('the command after -- is empty: give the program to run');
    const where = placesOf(ctx);
    const openId = currentSession(where.state);
    let open = openId ? readSessionInfo(where.state, openId) : undefined;
    const owner = open?.state === 'open' ? wrapOwner(open) : undefined;
    const ownerGone =
      open !== undefined &&
      owner !== undefined &&
      !processAlive(owner) &&
      otherWraps(where.state, open.id).length === 0;
    if (open !== undefined && owner !== undefined && ownerGone) {
      // A wrap killed outright left its own session open: sealed now, not taken for the user's.
      const stale = open;
      try {
        const closed = await sealSession(ctx, where, stale, { reconcileLimit: limit });
        ctx.stderr(
          `tally wrap: session ${open.id}, left open by a tally wrap that is gone (pid ${owner}), sealed: ${closed.packagePath}\n`,
        );
        open = undefined;
      } catch (error) {
        // It could not be sealed (its log, say): recorded into, as any open session.
        ctx.stderr(
          `tally wrap: session ${stale.id} was left open by a tally wrap that is gone (pid ${owner}) and could not be sealed (${(error as Error).message}): recording into it; seal it with tally session close\n`,
        );
      }
    }
    let session: SessionInfo | undefined;
    let own = false;
    if (open?.state === 'open') {
      if (wrapOwner(open) === undefined) session = open;
      else {
        // Another wrap's own session: joined, and sealed by the last of them to finish.
        joinWrapSession(where.state, open.id);
        if (readSessionInfo(where.state, open.id).state === 'open') {
          session = open;
          own = true;
        } else leaveWrapSession(where.state, open.id);
      }
    }
    // The tree the session watches: the project's (where its `.tally/` is), whatever folder wrap runs in.
    const root = session?.root ?? sessionRootFor(where, ctx.cwd);
    const inGit = (await repositoryOf(root, deadlineAfter())) !== null;
    if (session === undefined) {
      const signer = await signerOf(ctx, where);
      const certificatePath = values.agent ? certificatePathFor(where, ctx.cwd, values.agent) : undefined;
      ({ info: session } = await startSession({
        state: where.state,
        root,
        signer,
        ...(values.agent ? { agent: { name: values.agent } } : {}),
        ...(certificatePath ? { certificatePath } : {}),
        reconcileLimit: limit,
        owner: { command: 'wrap', pid: process.pid },
      }));
      own = true;
      joinWrapSession(where.state, session.id);
    }
    const sink = await sinkFor(ctx, where.state, session);
    const text = commandLine(cmd);
    const call = wrapCallId();
    // Each reading of the tree has the pass's time (a file not read by then is reported unreadable:
    // a sparse file of a terabyte would keep the command waiting for hours).
    const before = await snapshotTree(root, inGit, limit, { deadline: deadlineAfter(ms) });
    const decision = await sink(beforeEvent(call, text, ctx.cwd, session.id));
    let code = 1;
    let durationMs: number | null = null;
    let outcome: Outcome = { changes: 0, skipped: before.skipped, unreadable: [], compared: false };
    let pkg: string | undefined;
    // `ask` stops the command too: no harness is there to ask a person, and running it would be
    // counted as approved in the harness.
    const denied = decision !== null && decision !== undefined && decision.decision !== 'allow';
    // From here a signal does not end wrap before it has recorded the command's end and sealed its
    // session: during the command it is sent on, after it only noted.
    let late: NodeJS.Signals | undefined;
    const hold = (signal: NodeJS.Signals) => {
      late ??= signal;
    };
    for (const signal of FORWARDED) process.on(signal, hold);
    try {
      if (denied) {
        const why = decision.reason ? ` (${decision.reason})` : '';
        ctx.stderr(
          decision.decision === 'ask'
            ? `tally wrap: not run: it needs a person's approval${why}, which tally wrap cannot ask for; run it where the agent's harness asks, or allow it in the certificate\n`
            : `tally wrap: not run: denied by ${decision.by}${why}\n`,
        );
      } else {
        const ran = await runInherited(cmd, { cwd: ctx.cwd, env: ctx.env, lingerMs });
        late = undefined; // sent on to the command
        code = ran.code;
        durationMs = ran.durationMs;
        if (ran.startError)
          ctx.stderr(`tally wrap: cannot start ${redactText(cmd[0]!)}: ${ran.startError}\n`);
        if (ran.stillRunning)
          ctx.stderr(
            `tally wrap: processes the command started still run after ${lingerMs / 1000} s: what they change from now on is not in this comparison\n`,
          );
        outcome = await recordEnd(ctx, {
          where,
          session,
          call,
          text,
          root,
          inGit,
          limit,
          ms,
          before,
          ran,
        });
        outcome.stillRunning = ran.stillRunning === true;
      }
      pkg = own ? await sealOwn(ctx, where, session.id, limit) : undefined;
    } catch (error) {
      // The command ran or was refused: its exit code is wrap's, whatever recording it met.
      ctx.stderr(`tally wrap: not all was recorded: ${redactErrorMessage(error)}\n`);
    } finally {
      for (const signal of FORWARDED) process.off(signal, hold);
      if (late !== undefined)
        ctx.stderr(`tally wrap: ${late} came once the command had ended: recorded first\n`);
    }
    const { changes, skipped, unreadable, compared } = outcome;
    if (values.json)
      printJson(ctx, {
        session: session.id,
        exit_code: code,
        denied,
        duration_ms: durationMs,
        changes,
        skipped,
        limit,
        unreadable,
        compared,
        still_running: outcome.stillRunning === true,
        ...(pkg ? { package: pkg } : {}),
      });
    else {
      ctx.stderr(
        `tally wrap: ${changes} file changes recorded in session ${session.id}${skipped > 0 ? ` (${skipped} files not compared: past the limit of ${limit} files, or the tree not read within ${ms / 1000} s)` : ''}\n`,
      );
      if (unreadable.length > 0)
        ctx.stderr(
          `tally wrap: ${unreadable.length} files or folders could not be read, what they hold was not compared: ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}\n`,
        );
      if (pkg) ctx.stderr(`tally wrap: sealed ${pkg}\n`);
    }
    return code;
  },
};
