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
  type Ran,
  runInherited,
  WRAP_SOURCE,
  WRAP_URI,
  wrapCallId,
} from '../../capture/wrap/wrap.js';
import type { CanonicalEvent } from '../../core/event.js';
import { tallyHome } from '../../core/home.js';
import { processAlive } from '../../core/process-alive.js';
import { expectOk, RecorderClient } from '../../recorder/client.js';
import { certificatePathFor } from '../../session/agents.js';
import { recordEvent, startSession } from '../../session/lifecycle.js';
import { projectRootFor } from '../../session/paths.js';
import { currentSession, readSessionInfo, type SessionInfo } from '../../session/store.js';
import { type Command, type CommandContext, parseFlags, printJson, UsageError } from '../command.js';
import { harnessLogger } from '../harness-logger.js';
import { placesOf, signerOf } from '../session-context.js';
import { sealSession } from '../session-seal.js';

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

function positiveInteger(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100_000_000)
    throw new UsageError(`${flag}: '${value}' is not a whole number from 1 to 100000000`);
  return Number(value);
}

export const command: Command = {
  summary: 'run a command and record what it did (process, file changes)',
  usage: [
    'usage: tally wrap [--agent NAME] [--max-files N] [--max-seconds S] [--json] -- <command…>',
    '',
    'Runs the command with inherited stdio and records it: the command (redacted), cwd, exit code and',
    'duration, and every file it created, modified, deleted or renamed (content hashes of the tree',
    'before and after; .gitignore respected; at most N files hashed, default 100000, the rest counted;',
    'each reading of the tree stops after S seconds, default 30, and a file not read by then is',
    'reported unreadable).',
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
      json: { type: 'boolean' },
    });
    if (positionals.length > 0)
      throw new UsageError(`unexpected argument '${positionals[0]}' (the command goes after --)`);
    const limit = positiveInteger(values['max-files'], '--max-files', DEFAULT_FILE_LIMIT);
    const ms = positiveInteger(values['max-seconds'], '--max-seconds', DEFAULT_GIT_TIMEOUT_MS / 1000) * 1000;
    const cmd = argv.slice(dash + 1);
    const where = placesOf(ctx);
    const root = projectRootFor(ctx.cwd);
    const inGit = (await repositoryOf(root, deadlineAfter())) !== null;
    const openId = currentSession(where.state);
    let open = openId ? readSessionInfo(where.state, openId) : undefined;
    const owner = open?.state === 'open' ? wrapOwner(open) : undefined;
    if (open !== undefined && owner !== undefined && !processAlive(owner)) {
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
    let session: SessionInfo;
    let own = false;
    if (open?.state === 'open') session = open;
    else {
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
    }
    const sink = await sinkFor(ctx, where.state, session);
    const text = commandLine(cmd);
    const call = wrapCallId();
    // Each reading of the tree has the pass's time (a file not read by then is reported unreadable:
    // a sparse file of a terabyte would keep the command waiting for hours).
    const before = await snapshotTree(root, inGit, limit, { deadline: deadlineAfter(ms) });
    const decision = await sink(beforeEvent(call, text, ctx.cwd, session.id));
    let code: number;
    let changes = 0;
    let skipped = before.skipped;
    let unreadable: string[] = [];
    let durationMs: number | null = null;
    let compared = false;
    let ran: Ran | undefined;
    // `ask` stops the command too: no harness is there to ask a person, and running it would be
    // counted as approved in the harness.
    const denied = decision !== null && decision !== undefined && decision.decision !== 'allow';
    if (denied) {
      const why = decision.reason ? ` (${decision.reason})` : '';
      ctx.stderr(
        decision.decision === 'ask'
          ? `tally wrap: not run: it needs a person's approval${why}, which tally wrap cannot ask for; run it where the agent's harness asks, or allow it in the certificate\n`
          : `tally wrap: not run: denied by ${decision.by}${why}\n`,
      );
      code = 1;
    } else {
      ran = await runInherited(cmd, { cwd: ctx.cwd, env: ctx.env });
      if (ran.startError) ctx.stderr(`tally wrap: cannot start ${cmd[0]}: ${ran.startError}\n`);
      code = ran.code;
      durationMs = ran.durationMs;
    }
    // The command can close the session itself (`tally session close` in a script): that close
    // compared the tree then; what the command did after it is recorded nowhere, and said so.
    const closedUnder = ran !== undefined && readSessionInfo(where.state, session.id).state !== 'open';
    if (closedUnder)
      ctx.stderr(
        `tally wrap: session ${session.id} was closed while the command ran: the command's end and the files it changed after that close are not recorded\n`,
      );
    else if (ran !== undefined) {
      await sink(afterEvent(call, text, ctx.cwd, session.id, ran));
      const after = await afterSnapshot(ctx, root, inGit, limit, before, ms);
      const diff = after ? diffSnapshots(before, after) : undefined;
      if (diff) {
        skipped = diff.skipped;
        unreadable = diff.unreadable.map((u) => pathOut(u.raw).path);
      }
      for (const change of diff?.changes ?? []) {
        await sink(
          fileChangedEvent(change, { session: session.id, time: new Date().toISOString(), source: WRAP_URI }),
        );
        changes++;
      }
      compared = diff !== undefined;
    }
    // Wrap's own session, closed by the command: sealed by that close.
    let pkg = own && closedUnder ? readSessionInfo(where.state, session.id).package : undefined;
    if (own && !closedUnder) {
      const closed = await sealSession(ctx, where, readSessionInfo(where.state, session.id), {
        reconcileLimit: limit,
      });
      pkg = closed.packagePath;
    }
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
