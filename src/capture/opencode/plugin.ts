/**
 * Tally's OpenCode plugin: OpenCode's native hook mechanism is a JS module in a `plugin/`
 * directory of one of its config directories. The plugin posts every hook it forwards to the
 * recorder (`POST /hooks/opencode`, the secret read from TALLY_HOME like the command shim does)
 * and throws when the answer is a deny, which stops the tool. Each post names the session the user
 * started (`session_id`) and carries OpenCode's own info of the session the hook came from
 * (`session`: its `parentID` when a subagent runs in it, its agent and model), kept from
 * OpenCode's session events or asked of its client (./agent.ts). A session's first event goes
 * through the command shim, which starts the recorder when none answers. When the recorder cannot
 * be reached the payload is spooled (ingested when the recorder next starts) and a tool call is
 * answered by the failure policy written in: fail closed throws, fail open lets it run. Nothing is
 * sent to a port another user's process holds (../../recorder/listener.ts, imported from the
 * install): such a hook is spooled and answered by the failure policy too.
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
import { pathToFileURL } from 'node:url';

const CONFIG = ${config};

// Who listens on the recorder's port, asked of the kernel before the secret is sent there
// (Tally's own check, loaded from the install the shim runs).
let listener;
function foreignListener(port) {
  listener ??= import(new URL('../dist/src/recorder/listener.js', pathToFileURL(CONFIG.tally)).href);
  return listener.then((m) => m.foreignListener(port));
}

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
  // A line of its own even after one a killed process left cut short (the ingest skips blank lines).
  appendFileSync(join(dir, 'opencode.jsonl'), '\\n' + JSON.stringify(entry) + '\\n', { mode: 0o600 });
}

async function post(id, body) {
  const found = locate();
  if (!found) throw new Error('no recorder is configured');
  const session = process.env.TALLY_SESSION;
  const query = CONFIG.agent ? '?agent=' + encodeURIComponent(CONFIG.agent) : '';
  const foreign = await foreignListener(found.port);
  if (foreign) throw new Error(foreign);
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

// OpenCode's info of each session (parentID, agent, model), kept current from its session events;
// a session first met in a hook is asked of OpenCode.
function sessionBook(client) {
  const known = new Map();
  const keep = (info) => {
    if (!info || typeof info.id !== 'string') return undefined;
    const model = info.model && typeof info.model.id === 'string' ? { id: info.model.id, providerID: info.model.providerID } : undefined;
    const kept = { id: info.id, ...(info.parentID ? { parentID: info.parentID } : {}), ...(info.agent ? { agent: info.agent } : {}), ...(model ? { model } : {}) };
    known.set(info.id, kept);
    return kept;
  };
  const of = async (id) => {
    if (known.has(id)) return known.get(id);
    try {
      const found = await client.session.get({ path: { id } });
      return keep(found && found.data) || { id };
    } catch {
      return { id };
    }
  };
  // The session the user started: a subagent runs in a child session that names its parent.
  const rootOf = async (info) => {
    let at = info;
    for (let hops = 0; at.parentID && hops < 16; hops++) at = await of(at.parentID);
    return at.id;
  };
  return { keep, of, rootOf };
}

export const TallyPlugin = async ({ directory, client }) => {
  const sessions = sessionBook(client);
  // session_id is the session the user started (one Tally session holds its subagents too);
  // session is OpenCode's info of the session the hook came from.
  const body = async (name, id, rest) => {
    const session = await sessions.of(id);
    return { hook_event_name: name, session_id: await sessions.rootOf(session), cwd: directory, session, ...rest };
  };
  return {
    'tool.execute.before': async (input, output) => {
      const answer = await deliver(await body('tool.execute.before', input.sessionID, { input, output }), true);
      if (answer && answer.decision === 'deny') throw new Error(answer.reason || 'denied by policy');
    },
    'tool.execute.after': async (input, output) => {
      await deliver(await body('tool.execute.after', input.sessionID, { input, output }), false);
    },
    'chat.message': async (input, output) => {
      await deliver(await body('chat.message', input.sessionID, { input, output }), false);
    },
    event: async ({ event }) => {
      if (!event) return;
      const properties = event.properties || {};
      if (event.type === 'session.created' || event.type === 'session.updated') sessions.keep(properties.info);
      const session = properties.sessionID;
      if (!session || (event.type !== 'session.created' && event.type !== 'session.idle')) return;
      const sent = await body('event.' + event.type, session, { event });
      // A subagent's session starts while its parent's is recorded: no recorder to start.
      if (event.type === 'session.created' && !sent.session.parentID) await throughShim(sent);
      else await deliver(sent, false);
    },
  };
};
`;
}

/** A file that says it is Tally's plugin (its first line): what install overwrites and uninstall removes. */
export function isTallyPlugin(text: string): boolean {
  return text.startsWith(PLUGIN_MARK.slice(0, 26));
}

/**
 * A file that is Tally's plugin as Tally writes it, byte for byte, for the options its CONFIG line
 * names: the first line alone proves nothing (anyone can write it), and a hook added to Tally's
 * plugin makes it another party's.
 */
export function isRenderedTallyPlugin(text: string): boolean {
  if (!isTallyPlugin(text)) return false;
  const line = /^const CONFIG = (.*);$/m.exec(text)?.[1];
  let config: unknown;
  try {
    config = JSON.parse(line ?? '');
  } catch {
    return false;
  }
  const c = config as Record<string, unknown>;
  if (typeof c !== 'object' || c === null || typeof c.node !== 'string' || typeof c.tally !== 'string')
    return false;
  if (typeof c.failClosed !== 'boolean' || typeof c.timeoutMs !== 'number') return false;
  if (c.agent !== null && typeof c.agent !== 'string') return false;
  const options: PluginOptions = {
    node: c.node,
    tallyBin: c.tally,
    failClosed: c.failClosed,
    timeoutMs: c.timeoutMs,
    ...(typeof c.agent === 'string' ? { agent: c.agent } : {}),
  };
  return openCodePlugin(options) === text;
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
