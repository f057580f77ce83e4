/**
 * `tally run [--agent NAME] [--harness NAME] -- <agent command…>`: one command for a recorded,
 * controlled session. It starts the recorder and a session under the agent's certificate, wires
 * the agent's hooks for this run only (Claude Code: `--settings <file>`, nothing of the user's
 * touched), runs the agent with inherited stdio, keeps the recorder alive (restarting it if it
 * dies), closes the session when the agent exits (Ctrl-C and crashes included), and verifies the
 * package. Exit: the agent's code, or 1 when the package could not be sealed or did not verify.
 */
import { spawn } from 'node:child_process';
import { constants, homedir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { followFolder } from '../../core/fd-path.js';
import { tallyHome } from '../../core/home.js';
import { readLogLines } from '../../evidence/log/reader.js';
import { verifyPackageLines } from '../../evidence/package/verify.js';
import { expectOk, RecorderClient } from '../../recorder/client.js';
import { runToken, SECRET_ENV, SESSION_ENV } from '../../recorder/config.js';
import { certificatePathFor, readCertificateFile } from '../../session/agents.js';
import { defaultTrustedKeys, pinnedApprovers } from '../../session/identity.js';
import { places, projectRootFor } from '../../session/paths.js';
import { packagePath, sessionDir } from '../../session/store.js';
import { hookShim, projectRegistration, tallyCommand } from '../agent-hooks.js';
import { type Command, type CommandContext, parseFlags, printJson, UsageError } from '../command.js';
import { describeSwitch, preflightRun } from '../run-preflight.js';
import { claudeSession, wireRun } from '../run-wiring.js';
import { placesOf, recorderPassphrase } from '../session-context.js';
import { comparedAt } from '../session-seal.js';

const HARNESSES: Record<string, string> = {
  claude: 'claude-code',
  'claude.exe': 'claude-code',
  gemini: 'gemini-cli',
  qwen: 'qwen-code',
  codex: 'codex',
  opencode: 'opencode',
};
const SUPPORTED = new Set(['claude-code', 'gemini-cli', 'qwen-code', 'codex', 'opencode']);

function harnessOf(command: string, flag: string | undefined): string {
  const harness = flag ?? HARNESSES[basename(command)];
  if (harness === undefined)
    throw new UsageError(
      `cannot tell which agent '${basename(command)}' is: pass --harness (${[...SUPPORTED].join(', ')})`,
    );
  if (!SUPPORTED.has(harness))
    throw new UsageError(`--harness ${harness} has no adapter yet (supported: ${[...SUPPORTED].join(', ')})`);
  return harness;
}

/** Runs the agent; resolves with its exit code (signals as 128+n), forwarding Ctrl-C and SIGTERM. */
function runAgent(argv: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: 'inherit', env, cwd });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const done = (code: number) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      process.stderr.write(`tally run: cannot start ${argv[0]}: ${error.code ?? error.message}\n`);
      done(127);
    });
    child.once('exit', (code, signal) => {
      const n = signal ? (constants.signals as Record<string, number>)[signal] : undefined;
      done(code ?? 128 + (n ?? 1));
    });
  });
}

/**
 * Keeps the recorder up while the agent runs: a dead one is started again (it resumes each log);
 * one that holds its port and stopped answering cannot be replaced, and is said to the person, once
 * when it stops answering and once when it answers again.
 */
function watchdog(client: RecorderClient, ctx: CommandContext, secret: string | undefined): () => void {
  let busy = false;
  let silentSince: number | null = null;
  // A failure said once, not every second (another user's process holding the port stays).
  let said = '';
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const probe = await client.probe();
      if (probe.state === 'silent') {
        if (silentSince === null) ctx.stderr(`tally run: ${client.silent().message}\n`);
        silentSince ??= Date.now();
      } else if (silentSince !== null && probe.state === 'up') {
        ctx.stderr(
          `tally run: the recorder answers again (it did not for ${Math.round((Date.now() - silentSince) / 1000)} s)\n`,
        );
        silentSince = null;
      } else if (probe.state === 'down') {
        silentSince = null;
        ctx.stderr('tally run: the recorder stopped; starting it again\n');
        await client.ensure({ env: ctx.env, ...(secret ? { passphrase: secret } : {}) });
      }
      said = '';
    } catch (error) {
      if ((error as Error).message !== said) ctx.stderr(`tally run: ${(error as Error).message}\n`);
      said = (error as Error).message;
    } finally {
      busy = false;
    }
  }, 1000);
  return () => clearInterval(timer);
}

/** `--witness URL [--witness-every N]`, checked here so a typo fails before the agent starts. */
function witnessFlags(
  hub: string | undefined,
  every: string | undefined,
): { hub: string; every?: number } | undefined {
  if (hub === undefined) {
    if (every !== undefined) throw new UsageError('--witness-every needs --witness HUB');
    return undefined;
  }
  if (!URL.canParse(hub) || !/^https?:$/.test(new URL(hub).protocol))
    throw new UsageError(`--witness: '${hub}' is not an http(s) URL`);
  if (every === undefined) return { hub };
  const n = Number(every);
  if (!/^\d+$/.test(every) || n < 1 || n > 1_000_000)
    throw new UsageError(`--witness-every: '${every}' is not a whole number of records from 1 to 1000000`);
  return { hub, every: n };
}

export const command: Command = {
  summary: 'run an agent in a recorded, controlled session: start, capture, close, verify',
  usage: [
    'usage: tally run [--agent NAME] [--harness NAME] [--registration FILE] [--witness HUB [--witness-every N]]',
    '                 [--allow-other-hooks] [--json] -- <agent command…>',
    '',
    'Starts a session (under NAME’s certificate) and the recorder, wires the agent’s hooks for this run',
    'only, runs the agent, then closes the session, seals and verifies the package. The harness is',
    'taken from the command’s name (claude, gemini, qwen, codex, opencode) or --harness (claude-code,',
    'gemini-cli, qwen-code, codex, opencode). OpenCode gets a config directory of the run’s own',
    '(OPENCODE_CONFIG_DIR) holding Tally’s plugin.',
    'Claude Code gets --settings <file>; Gemini CLI and Qwen Code a config home of the run’s own',
    '(GEMINI_CLI_HOME, QWEN_HOME, CODEX_HOME: the user’s, linked, with Tally’s hooks — Qwen Code’s',
    'fail-open ones over http; Codex trusts them in a copy of config.toml). Nothing of the user’s is edited.',
    'With --witness, the recorder sends the chain head to HUB every N records (default 32) while the',
    'agent runs, and the last one at close, so records dropped or rewritten later are caught by',
    '`tally verify --hub HUB`.',
    'Before it starts, the agent’s settings are read: a key that would switch off the hooks this run wires',
    'is overridden where the agent lets the run’s own settings win (Claude Code’s disableAllHooks, Gemini',
    'CLI’s and Qwen Code’s user settings) and refused otherwise (exit 2, naming the file and key); another',
    'hook where calls are judged (PreToolUse, BeforeTool, an OpenCode plugin) is refused unless',
    '--allow-other-hooks. Claude Code gets --session-id, so its transcript is read at close.',
    'Exit: the agent’s own code, or 1 when the package could not be sealed or did not verify — also when the',
    'wired harness reported nothing (harness_reported).',
  ].join('\n'),
  async run(argv, ctx) {
    const dash = argv.indexOf('--');
    if (dash < 0 || dash === argv.length - 1) throw new UsageError('give the agent command after --');
    const { values, positionals } = parseFlags(argv.slice(0, dash), {
      agent: { type: 'string' },
      harness: { type: 'string' },
      registration: { type: 'string' },
      witness: { type: 'string' },
      'witness-every': { type: 'string' },
      'allow-other-hooks': { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const witness = witnessFlags(values.witness, values['witness-every']);
    if (positionals.length > 0)
      throw new UsageError(`unexpected argument '${positionals[0]}' (the agent command goes after --)`);
    const agentArgv = argv.slice(dash + 1);
    const harness = harnessOf(agentArgv[0]!, values.harness);
    const where = placesOf(ctx);
    const { registration, path: registrationPath } = projectRegistration(where, ctx.cwd, values.registration);
    // Refused before anything starts: settings that would keep the wired hooks from running.
    const preflight = preflightRun(
      harness,
      agentArgv,
      {
        cwd: ctx.cwd,
        root: where.project ? projectRootFor(where.project) : projectRootFor(ctx.cwd),
        env: ctx.env,
        home: ctx.env.HOME || homedir(),
      },
      values['allow-other-hooks'] === true,
    );
    for (const s of preflight.neutralised)
      ctx.stderr(
        `tally run: ${describeSwitch(s)} would switch hooks off; this run's own settings turn them on\n`,
      );
    for (const s of preflight.otherHooks)
      ctx.stderr(
        `tally run: warning: runs beside another hook where calls are judged: ${describeSwitch(s)}\n`,
      );
    const claude = harness === 'claude-code' ? claudeSession(agentArgv, ctx.env, ctx.cwd) : undefined;
    const wiring = {
      harness,
      ...(claude ? { harness_session: claude.id, transcript: claude.transcript } : {}),
      neutralised: preflight.neutralised.slice(0, 100).map(({ path, key }) => ({ path, key })),
      other_hooks: preflight.otherHooks.slice(0, 100).map(({ path, key, hook }) => ({
        path,
        key,
        ...(hook ? { hook } : {}),
      })),
    };
    const clock = { start: performance.now(), marks: {} as Record<string, number> };
    const mark = (name: string) => {
      clock.marks[name] = Math.round(performance.now() - clock.start);
    };
    const client = await RecorderClient.of(tallyHome(ctx.env), ctx.env);
    // The recorder signs: an encrypted ship key's passphrase is asked here, at the terminal, and
    // handed to it over a pipe.
    const secret = await recorderPassphrase(ctx, where);
    await client.ensure({ env: ctx.env, ...(secret ? { passphrase: secret } : {}) });
    mark('recorder');
    const started = expectOk(
      await client.request('POST', '/sessions', {
        cwd: ctx.cwd,
        ...(values.agent ? { agent: values.agent } : {}),
        ...(registrationPath ? { registration: registrationPath } : {}),
        ...(witness ? { witness } : {}),
        wiring,
      }),
      'starting the session',
    ) as { session: string; state: string; root: string };
    ctx.stderr(`tally run: session ${started.session}${values.agent ? ` for ${values.agent}` : ''}\n`);
    const sh = hookShim(ctx.env);
    let wired: Awaited<ReturnType<typeof wireRun>>;
    try {
      wired = await wireRun(harness, agentArgv, {
        dir: sessionDir(started.state, started.session),
        registration,
        port: client.port,
        tally: tallyCommand(),
        ...(sh ? { sh } : {}),
        env: ctx.env,
        cwd: ctx.cwd,
        ...(claude ? { harnessSession: claude.id } : {}),
      });
    } catch (error) {
      // The agent never started: the session is sealed as it stands (its start alone), not left
      // open and held by the recorder for the next run of this project to trip over.
      const closed = await client
        .request('POST', '/sessions/close', { session: started.session, cwd: ctx.cwd })
        .then(
          (reply) => reply.status === 200,
          () => false,
        );
      ctx.stderr(
        `tally run: the agent's hooks could not be wired, so it was not started; session ${started.session} ${closed ? 'was closed' : 'could not be closed (tally session close)'}\n`,
      );
      throw error;
    }
    const env = {
      ...ctx.env,
      ...wired.env,
      [SECRET_ENV]: runToken(client.secret, started.session),
      [SESSION_ENV]: started.session,
    };
    mark('session');
    const stop = watchdog(client, ctx, secret);
    // Followed by a descriptor: an agent may move the project, and the session's state with it.
    const stateFolder = followFolder(started.state);
    let code: number;
    let state = started.state;
    try {
      code = await runAgent(wired.argv, env, ctx.cwd);
    } finally {
      stop();
      wired.restore();
      state = stateFolder.now();
      stateFolder.close();
    }
    mark('agent');
    // The agent is done: its session is sealed, whatever its exit code. The project is named, so a
    // recorder started again since (the one holding the session died) opens the session to seal it.
    // An agent that moved the project took the session's state with it: it is sealed there.
    const moved = state !== started.state;
    const here = moved ? places(dirname(state), ctx.env) : where;
    const cwd = moved ? dirname(state) : ctx.cwd;
    if (moved)
      ctx.stderr(
        `tally run: the project moved to ${dirname(state)} during the session; it is sealed there\n`,
      );
    await client.ensure({ env: ctx.env, ...(secret ? { passphrase: secret } : {}) });
    // The close's pass must compare the tree after this: not while the agent ran, nor in the moment
    // between its exit and this close, when a process it left behind could ask for one.
    const asked = Date.now();
    let sealed: { package: string; records: number; witness?: { sent_to_last: number; failures: string[] } };
    try {
      sealed = expectOk(
        await client.request('POST', '/sessions/close', { session: started.session, cwd }),
        'closing the session',
      ) as typeof sealed;
    } catch (error) {
      ctx.stderr(`tally run: the session could not be sealed: ${(error as Error).message}\n`);
      return 1;
    }
    mark('sealed');
    // The package of this session, where this session's state keeps it: not whichever path the
    // answer names (a process that took the recorder's port could name another session's package).
    const own = packagePath(state, started.session);
    if (resolve(sealed.package) !== own) {
      ctx.stderr(
        `tally run: the recorder answered the close with ${sealed.package}, which is not this session's package (${own}); not verified\n`,
      );
      return 1;
    }
    const certificate = values.agent
      ? readCertificateFile(certificatePathFor(here, cwd, values.agent))
      : undefined;
    const trusted = defaultTrustedKeys(here).map((k) => k.publicKey);
    const result = await verifyPackageLines(readLogLines(own), {
      trusted,
      approvers: pinnedApprovers(here.home).map((k) => k.publicKey),
      now: new Date(),
      ...(certificate ? { certificate } : {}),
    });
    mark('verified');
    if (result.session !== started.session) {
      ctx.stderr(
        `tally run: ${own} holds session ${result.session ?? '(none)'}, not ${started.session}; verification FAILED\n`,
      );
      return 1;
    }
    const failed = result.checks.filter((c) => !c.ok && c.code !== 'skipped');
    // The tree must have been compared by this run's close. One the agent asked for while it ran
    // (the recorder's endpoint, `tally session close`) sealed the session then, and this close
    // found it sealed already: what the agent changed after that is in no receipt.
    const compared = await comparedAt(own, started.session, trusted);
    if (compared !== undefined && compared < asked) {
      failed.push({
        check: 'workspace_reconciled',
        ok: false,
        code: 'closed-while-running',
        detail: { compared_at: new Date(compared).toISOString() },
      });
      ctx.stderr(
        `tally run: the session was closed at ${new Date(compared).toISOString()}, before this run asked, by a close it did not ask for (while the agent ran): what changed after it is in no receipt\n`,
      );
    }
    const silent = failed.find((c) => c.check === 'harness_reported');
    if (silent)
      ctx.stderr(
        `tally run: NOT CAPTURED: ${(silent.detail as { message?: string }).message ?? silent.code}; the agent's settings, arguments or environment may have kept Tally's hooks from running\n`,
      );
    const m = clock.marks;
    // Milliseconds of each phase, in order: what Tally adds before, around and after the agent.
    const timings = {
      recorder_ms: m.recorder!,
      session_ms: m.session! - m.recorder!,
      agent_ms: m.agent! - m.session!,
      seal_ms: m.sealed! - m.agent!,
      verify_ms: m.verified! - m.sealed!,
    };
    if (values.json)
      printJson(ctx, {
        session: started.session,
        package: sealed.package,
        records: sealed.records,
        agent_exit: code,
        verified: result.ok && failed.length === 0,
        failed: failed.map((c) => ({ check: c.check, code: c.code })),
        unauthorized: result.cross?.unauthorized.length ?? null,
        ...(sealed.witness ? { witness: { hub: witness?.hub, ...sealed.witness } } : {}),
        timings,
      });
    else {
      ctx.stderr(`tally run: ${sealed.records} records sealed in ${sealed.package}\n`);
      if (sealed.witness)
        ctx.stderr(
          sealed.witness.failures.length === 0
            ? `tally run: chain heads witnessed by ${witness?.hub} up to record ${sealed.witness.sent_to_last}\n`
            : `tally run: ${sealed.witness.failures.length} chain heads were not witnessed: ${sealed.witness.failures[0]}\n`,
        );
      ctx.stderr(
        result.ok && failed.length === 0
          ? `tally run: VERIFIED${result.cross ? ` — ${result.cross.unauthorized.filter((c) => !c.blocked).length} unauthorized calls ran, ${result.cross.unauthorized.filter((c) => c.blocked).length} were blocked` : ''}\n`
          : `tally run: verification FAILED: ${failed.map((c) => `${c.check} (${c.code})`).join(', ')}\n`,
      );
      ctx.stdout(`${sealed.package}\n`);
    }
    return result.ok && failed.length === 0 ? code : 1;
  },
};
