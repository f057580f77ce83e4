/**
 * Tally's OpenCode plugin: OpenCode's native hook mechanism is a JS module in a `plugin/`
 * directory of one of its config directories. The plugin posts every hook it forwards to the
 * recorder (`POST /hooks/opencode`, the secret read from TALLY_HOME like the command shim does)
 * and throws when the answer is a deny, which stops the tool. A session's first event goes
 * through the command shim, which starts the recorder when none answers. When the recorder cannot
 * be reached the payload is spooled (ingested when the recorder next starts) and a tool call is
 * answered by the failure policy written in: fail closed throws, fail open lets it run.
 */
import { join } from 'node:path';

/** The plugin's first line: how Tally's plugin file is told apart from anyone else's. */
export const PLUGIN_MARK =
  '// tally-opencode-plugin: written by `tally install opencode`; `tally uninstall opencode` removes it';

export interface PluginOptions {
  /** node and bin/tally.js, for the shim. */
  node: string;
  tallyBin: string;
  failClosed: boolean;
  /** Milliseconds a tool call waits for the recorder's answer. */
  timeoutMs: number;
  agent?: string;
}

export function openCodePlugin(o: PluginOptions): string {
  const config = JSON.stringify({
    node: o.node,
    tally: o.tallyBin,
    failClosed: o.failClosed,
    timeoutMs: o.timeoutMs,
    agent: o.agent ?? null,
  });
  return `${PLUGIN_MARK}
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

const CONFIG = ${config};

function home() {
  const h = process.env.TALLY_HOME;
  return resolve(h ? h : join(homedir(), '.tally'));
}

function locate() {
  try {
    const port = JSON.parse(readFileSync(join(home(), 'recorder.json'), 'utf8')).port;
    const secret = readFileSync(join(home(), 'run', 'recorder.secret'), 'utf8').trim();
    return typeof port === 'number' && /^[0-9a-f]{64}$/.test(secret) ? { port, secret } : null;
  } catch {
    return null;
  }
}

function eventId() {
  return 'evt_' + Date.now().toString(16) + Math.floor(Math.random() * 2 ** 48).toString(16).padStart(12, '0');
}

function spool(id, body, answered) {
  const dir = join(home(), 'spool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const session = process.env.TALLY_SESSION;
  const entry = { id, received_at: new Date().toISOString(), channel: 'opencode', ...(session ? { session } : {}), ...(CONFIG.agent ? { agent: CONFIG.agent } : {}), payload: body, ...(answered ? { answered } : {}) };
  appendFileSync(join(dir, 'opencode.jsonl'), JSON.stringify(entry) + '\\n', { mode: 0o600 });
}

async function post(id, body) {
  const found = locate();
  if (!found) throw new Error('no recorder is configured');
  const session = process.env.TALLY_SESSION;
  const query = CONFIG.agent ? '?agent=' + encodeURIComponent(CONFIG.agent) : '';
  let res;
  try {
    res = await fetch('http://127.0.0.1:' + found.port + '/hooks/opencode' + query, {
      method: 'POST',
      headers: {
        authorization: 'Bearer ' + found.secret,
        'content-type': 'application/json',
        'x-tally-event-id': id,
        ...(session ? { 'x-tally-session': session } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CONFIG.timeoutMs),
    });
  } catch (error) {
    throw new Error('the recorder on 127.0.0.1:' + found.port + ' did not answer: ' + (error && error.message));
  }
  const text = await res.text();
  if (res.status !== 200) throw new Error('it answered ' + res.status + ': ' + text.slice(0, 300));
  return JSON.parse(text);
}

/** Delivers one hook; on failure spools it and answers the failure policy. */
async function deliver(body, decides) {
  const id = eventId();
  try {
    return await post(id, body);
  } catch (error) {
    const closed = decides && CONFIG.failClosed;
    const reason = "Tally's recorder is unreachable and this hook fails closed (" + error.message + ')';
    spool(id, body, closed ? { decision: 'deny', by: 'dev.tally.hook-shim', reason: 'the recorder was unreachable (fail-closed)' } : undefined);
    return closed ? { decision: 'deny', reason } : {};
  }
}

/** The session's first event, through the shim: it starts the recorder when none answers. */
function throughShim(body) {
  return new Promise((done) => {
    const args = [CONFIG.tally, 'hook', 'opencode', '--fail', CONFIG.failClosed ? 'closed' : 'open', ...(CONFIG.agent ? ['--agent', CONFIG.agent] : [])];
    const child = spawn(CONFIG.node, args, { stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => done());
    child.on('exit', () => done());
    child.stdin.end(JSON.stringify(body));
  });
}

export const TallyPlugin = async ({ directory }) => ({
  'tool.execute.before': async (input, output) => {
    const answer = await deliver({ hook_event_name: 'tool.execute.before', session_id: input.sessionID, cwd: directory, input, output }, true);
    if (answer && answer.decision === 'deny') throw new Error(answer.reason || 'denied by policy');
  },
  'tool.execute.after': async (input, output) => {
    await deliver({ hook_event_name: 'tool.execute.after', session_id: input.sessionID, cwd: directory, input, output }, false);
  },
  'chat.message': async (input, output) => {
    await deliver({ hook_event_name: 'chat.message', session_id: input.sessionID, cwd: directory, input, output }, false);
  },
  event: async ({ event }) => {
    const session = event && event.properties && event.properties.sessionID;
    if (!session) return;
    const body = { hook_event_name: 'event.' + event.type, session_id: session, cwd: directory, event };
    if (event.type === 'session.created') await throughShim(body);
    else if (event.type === 'session.idle') await deliver(body, false);
  },
});
`;
}

export function isTallyPlugin(text: string): boolean {
  return text.startsWith(PLUGIN_MARK.slice(0, 26));
}

/** The plugin file per scope: the project's `.opencode/plugin/`, the user's config directory's. */
export function openCodePluginPath(
  scope: 'project' | 'user' | 'managed',
  root: string,
  home: string,
  env: NodeJS.ProcessEnv,
): string {
  if (scope === 'project') return join(root, '.opencode', 'plugin', 'tally.js');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'opencode', 'plugin', 'tally.js');
}
