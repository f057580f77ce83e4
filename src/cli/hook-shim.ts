/**
 * `tally hook <agent>`: the command-hook shim. It reads the hook payload on stdin, hands it to
 * the recorder and prints the recorder's native answer — one loopback request, no judging here.
 * SessionStart (which Claude Code never sends over http) starts the recorder when it is down.
 * When the recorder cannot be reached the payload is spooled (ingested, once, when it next
 * starts) and the agent is answered as the registration's failure policy says: `--fail closed`
 * denies a tool call, `--fail open` lets it run. bin/tally.js runs it (bundled with
 * hook-process.ts into one CommonJS file) without the rest of the CLI, so a hook costs little more
 * than starting node: keep its imports to node: built-ins and these few modules.
 */
import { join } from 'node:path';
import { homeOf, locateRecorder } from '../recorder/locate.js';
import { appendSpool, SHIM_ANSWERER, SHIM_DENIAL } from '../recorder/spool-file.js';
import { type HookReply, postHook, RecorderUnreachable } from './hook-post.js';

const SESSION_ENV = 'TALLY_SESSION';

/** The id a caller (the sh shim) already sent this payload under, so a retry is the same event. */
const GIVEN_ID = /^evt_[A-Za-z0-9_-]{1,76}$/;

function eventId(): string {
  // Unique enough to tell this payload's spooled copy from its delivered one; not a secret.
  return `evt_${Date.now().toString(16)}${Math.floor(Math.random() * 2 ** 48)
    .toString(16)
    .padStart(12, '0')}`;
}

/**
 * The agents the shim serves, and how each is told "no" when the recorder cannot be reached: the
 * native events that can still be stopped (a tool call, a prompt) and the answer format it honours.
 * Kept here, not in the adapters, so a hook loads nothing else.
 */
const CHANNELS: Record<
  string,
  { tools: string[]; prompt: string; start: string; style: 'claude' | 'gemini' | 'cursor' }
> = {
  'claude-code': {
    tools: ['PreToolUse'],
    prompt: 'UserPromptSubmit',
    start: 'SessionStart',
    style: 'claude',
  },
  'qwen-code': { tools: ['PreToolUse'], prompt: 'UserPromptSubmit', start: 'SessionStart', style: 'claude' },
  'gemini-cli': { tools: ['BeforeTool'], prompt: 'BeforeAgent', start: 'SessionStart', style: 'gemini' },
  codex: { tools: ['PreToolUse'], prompt: 'UserPromptSubmit', start: 'SessionStart', style: 'claude' },
  // OpenCode's plugin answers its tool calls itself; it runs the shim only to start a session.
  opencode: {
    tools: ['tool.execute.before'],
    prompt: 'chat.message',
    start: 'event.session.created',
    style: 'gemini',
  },
  // Cursor has no session start event: its first prompt starts the recorder.
  cursor: {
    tools: ['beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile'],
    prompt: 'beforeSubmitPrompt',
    start: 'beforeSubmitPrompt',
    style: 'cursor',
  },
};

export interface ShimIo {
  stdin: () => Promise<Buffer>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /**
   * Loads the recorder's client (a SessionStart that finds no recorder). The process entry gives
   * its own: the bundle bin/tally.js compiles from a code cache cannot run import() itself.
   */
  recorderClient?: () => Promise<typeof import('../recorder/client.js')>;
}

function hookEventOf(bytes: Buffer): string | undefined {
  try {
    const name = (JSON.parse(bytes.toString('utf8')) as { hook_event_name?: unknown }).hook_event_name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The failure policy's answer, as the agent reads it. */
function failureAnswer(channel: string, event: string | undefined, failClosed: boolean, why: string): string {
  const c = CHANNELS[channel]!;
  if (!failClosed || event === undefined || (!c.tools.includes(event) && event !== c.prompt)) return '{}';
  const reason = `Tally's recorder is unreachable and this hook fails closed (${why})`;
  if (c.style === 'gemini') return JSON.stringify({ decision: 'deny', reason });
  if (c.style === 'cursor')
    return JSON.stringify(
      event === c.prompt
        ? { continue: false, user_message: reason }
        : { permission: 'deny', user_message: reason, agent_message: reason },
    );
  if (event === 'PreToolUse')
    return JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: reason,
      },
    });
  if (event === 'UserPromptSubmit') return JSON.stringify({ decision: 'block', reason });
  return '{}';
}

export async function runHookShim(argv: string[], io: ShimIo): Promise<number> {
  const [channel, ...flags] = argv;
  if (channel === undefined || !Object.hasOwn(CHANNELS, channel)) {
    io.stderr(`tally hook: expected an agent (${Object.keys(CHANNELS).join(', ')})\n`);
    return 2;
  }
  const failClosed = flags.includes('--fail') ? flags[flags.indexOf('--fail') + 1] !== 'open' : true;
  const agentAt = flags.indexOf('--agent');
  const agent = agentAt >= 0 ? flags[agentAt + 1] : undefined;
  const bytes = await io.stdin();
  // Read from the payload only when the recorder does not answer: a delivered hook's payload is
  // parsed by the recorder, not here too (a PostToolUse can carry a large tool response).
  let event: string | undefined | null = null;
  const eventOf = () => {
    if (event === null) event = hookEventOf(bytes);
    return event;
  };
  const home = homeOf(io.env);
  const spoolDir = join(home, 'spool');
  const givenAt = flags.indexOf('--event-id');
  const given = givenAt >= 0 ? flags[givenAt + 1] : undefined;
  const id = given !== undefined && GIVEN_ID.test(given) ? given : eventId();
  const session = io.env[SESSION_ENV];
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-tally-event-id': id,
    ...(session ? { 'x-tally-session': session } : {}),
  };
  const path = `/hooks/${channel}${agent ? `?agent=${encodeURIComponent(agent)}` : ''}`;
  let why = 'no answer';
  try {
    let found = locateRecorder(home);
    // The body is the payload as received: bytes, not a re-serialisation.
    const post = () => {
      if (found === null) throw new RecorderUnreachable('no recorder is configured');
      return postHook(
        found.port,
        path,
        { ...headers, authorization: `Bearer ${found.secret}` },
        bytes,
        60_000,
      );
    };
    let reply: HookReply;
    try {
      reply = await post();
    } catch (error) {
      if (!(error instanceof RecorderUnreachable) || eventOf() !== CHANNELS[channel]!.start) throw error;
      // The one event that starts the recorder: it is the first of every session. Only now is
      // the rest of the recorder's client loaded.
      const { RecorderClient } = await (io.recorderClient?.() ?? import('../recorder/client.js'));
      const client = await RecorderClient.of(home, io.env);
      await client.ensure({ env: io.env });
      found = { port: client.port, secret: client.secret };
      reply = await post();
    }
    if (reply.status === 200) {
      io.stdout(reply.text);
      return 0;
    }
    why = `it answered ${reply.status}: ${reply.text.slice(0, 300)}`;
  } catch (error) {
    why = (error as Error).message;
  }
  const failed = eventOf();
  appendSpool(spoolDir, {
    id,
    received_at: new Date().toISOString(),
    channel,
    ...(session ? { session } : {}),
    ...(agent ? { agent } : {}),
    payload: safeParse(bytes),
    ...(failClosed &&
    failed !== undefined &&
    (CHANNELS[channel]!.tools.includes(failed) || failed === CHANNELS[channel]!.prompt)
      ? {
          answered: {
            decision: 'deny' as const,
            by: SHIM_ANSWERER,
            reason: SHIM_DENIAL,
          },
        }
      : {}),
  });
  io.stderr(`tally hook: ${why}; the event was spooled\n`);
  io.stdout(failureAnswer(channel, failed, failClosed, why));
  return 0;
}

function safeParse(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return { unparsed_b64: bytes.toString('base64') };
  }
}
