/**
 * Tiny hook endpoints for tests (no Tally code): a command-hook script and an HTTP hook server that
 * record every payload they get and answer by simple rules, so a test can see which native events
 * fired, with what, and whether an answer (deny, ask, …) really changes what the agent does.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeTempDir, removeTempDir } from './temp.js';

/** When a rule applies: every given field must match (tool: exact tool name). */
export interface Match {
  /** The hook's label (command hooks) or path segment (HTTP hooks) — usually the event name. */
  label?: string;
  /** The payload's `hook_event_name`. */
  event?: string;
  /** The payload's `tool_name`. */
  tool?: string;
}

export interface CommandAnswer extends Match {
  /** Printed on stdout (objects as JSON). */
  stdout?: unknown;
  stderr?: string;
  exit?: number;
}

export interface HookCall {
  label: string;
  payload: Record<string, unknown>;
  /** The hook process's environment, only the variables agents set for hooks. */
  env: Record<string, string>;
  answered: number;
}

const SCRIPT = `import { appendFileSync, readFileSync } from 'node:fs';
const [dir, label] = [process.argv[2], process.argv[3] ?? ''];
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const text = Buffer.concat(chunks).toString('utf8');
let payload;
try { payload = JSON.parse(text); } catch { payload = { unparsed: text }; }
const keep = /^(CLAUDE|GEMINI|QWEN|CODEX|OPENCODE|PWD$)/;
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => keep.test(k)));
const rules = JSON.parse(readFileSync(dir + '/answers.json', 'utf8'));
const i = rules.findIndex((r) => (r.label === undefined || r.label === label) &&
  (r.event === undefined || r.event === payload.hook_event_name) &&
  (r.tool === undefined || r.tool === payload.tool_name));
appendFileSync(dir + '/calls.jsonl', JSON.stringify({ label, payload, env, answered: i }) + '\\n');
const rule = rules[i] ?? {};
if (rule.stdout !== undefined) process.stdout.write(typeof rule.stdout === 'string' ? rule.stdout : JSON.stringify(rule.stdout));
if (rule.stderr !== undefined) process.stderr.write(rule.stderr);
process.exitCode = rule.exit ?? 0;
`;

export interface CommandHook {
  dir: string;
  /** The shell command an agent's config runs for a hook with this label. */
  command(label: string): string;
  /** The command as argv (for agents that take an array). */
  argv(label: string): string[];
  setAnswers(rules: CommandAnswer[]): void;
  calls(): HookCall[];
  cleanup(): void;
}

export function commandHook(rules: CommandAnswer[] = []): CommandHook {
  const dir = makeTempDir('hook');
  writeFileSync(join(dir, 'hook.mjs'), SCRIPT);
  writeFileSync(join(dir, 'calls.jsonl'), '');
  const setAnswers = (r: CommandAnswer[]): void =>
    writeFileSync(join(dir, 'answers.json'), JSON.stringify(r));
  setAnswers(rules);
  const argv = (label: string): string[] => [process.execPath, join(dir, 'hook.mjs'), dir, label];
  return {
    dir,
    argv,
    command: (label) =>
      argv(label)
        .map((a) => `'${a}'`)
        .join(' '),
    setAnswers,
    calls: () =>
      readFileSync(join(dir, 'calls.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as HookCall),
    cleanup: () => removeTempDir(dir),
  };
}

export interface HttpAnswer extends Match {
  status?: number;
  body?: unknown;
  /** Answer only after this long (to provoke a hook timeout). */
  delayMs?: number;
}

export interface HttpHookCall {
  method: string;
  path: string;
  label: string;
  headers: Record<string, string | string[] | undefined>;
  payload: Record<string, unknown>;
  answered: number;
}

export interface HttpHook {
  /** Base URL; a hook for label L posts to `${url}/hook/L`. */
  url: string;
  urlFor(label: string): string;
  calls: HttpHookCall[];
  setAnswers(rules: HttpAnswer[]): void;
  close(): Promise<void>;
}

export async function httpHook(initial: HttpAnswer[] = []): Promise<HttpHook> {
  let rules = initial;
  const calls: HttpHookCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        payload = { unparsed: Buffer.concat(chunks).toString('utf8') };
      }
      const path = req.url ?? '';
      const label = decodeURIComponent(path.replace(/^\/hook\//, '').split('?')[0] ?? '');
      const i = rules.findIndex(
        (r) =>
          (r.label === undefined || r.label === label) &&
          (r.event === undefined || r.event === payload.hook_event_name) &&
          (r.tool === undefined || r.tool === payload.tool_name),
      );
      calls.push({ method: req.method ?? '', path, label, headers: req.headers, payload, answered: i });
      const rule = rules[i] ?? {};
      const send = (): void => {
        if (res.destroyed) return;
        res.writeHead(rule.status ?? 200, { 'content-type': 'application/json' });
        res.end(
          rule.body === undefined
            ? '{}'
            : typeof rule.body === 'string'
              ? rule.body
              : JSON.stringify(rule.body),
        );
      };
      if (rule.delayMs) setTimeout(send, rule.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    urlFor: (label) => `${url}/hook/${encodeURIComponent(label)}`,
    calls,
    setAnswers: (r) => {
      rules = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Claude Code's (and Codex's, Qwen's) deny answer for a PreToolUse hook. */
export function denyPreToolUse(reason: string): Record<string, unknown> {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  };
}

export function decidePreToolUse(
  decision: 'allow' | 'ask' | 'deny',
  reason: string,
): Record<string, unknown> {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision,
      permissionDecisionReason: reason,
    },
  };
}

/** An OpenCode plugin rule: throw `message` from this hook (for tool hooks: for this tool). */
export interface PluginAnswer {
  hook: string;
  tool?: string;
  throw: string;
}

export interface PluginCall {
  hook: string;
  input: unknown;
  output: unknown;
  /** With `sessions`: what OpenCode's client answered for the hook's session (`session.get`). */
  session?: unknown;
}

// Runs inside OpenCode (Bun). Records every hook it is given and throws where a rule says so;
// values are copied through JSON so that what is recorded is what a plugin could serialise. With
// SESSIONS it also asks OpenCode's client (the plugin's context) for the hook's session.
const PLUGIN = (
  dir: string,
  sessions: boolean,
): string => `import { appendFileSync, readFileSync } from 'node:fs';
const DIR = ${JSON.stringify(dir)};
const SESSIONS = ${JSON.stringify(sessions)};
const safe = (v) => { try { return JSON.parse(JSON.stringify(v ?? null)); } catch { return String(v); } };
const record = (hook, input, output, session) =>
  appendFileSync(DIR + '/calls.jsonl', JSON.stringify({ hook, input: safe(input), output: safe(output), ...(session === undefined ? {} : { session: safe(session) }) }) + '\\n');
const answer = (hook, input) => {
  const rules = JSON.parse(readFileSync(DIR + '/answers.json', 'utf8'));
  const rule = rules.find((r) => r.hook === hook && (r.tool === undefined || r.tool === input?.tool));
  if (rule) throw new Error(rule.throw);
};
export const TallyTestRecorder = async (ctx) => {
  record('plugin.init', { keys: Object.keys(ctx), directory: ctx.directory, worktree: ctx.worktree }, null);
  const sessionOf = async (id) => {
    if (!SESSIONS || typeof id !== 'string') return undefined;
    try { return (await ctx.client.session.get({ path: { id } })).data ?? null; } catch (e) { return { error: String(e) }; }
  };
  const hook = (name) => async (input, output) => { record(name, input, output, await sessionOf(input?.sessionID)); answer(name, input); };
  return {
    event: async ({ event }) => record('event', event, null),
    'chat.message': hook('chat.message'),
    'chat.params': hook('chat.params'),
    'permission.ask': hook('permission.ask'),
    'tool.execute.before': hook('tool.execute.before'),
    'tool.execute.after': hook('tool.execute.after'),
  };
};
`;

export interface OpencodePlugin {
  dir: string;
  /** Files to pass to runAgent: the plugin in OpenCode's user plugin folder. */
  files: Record<string, string>;
  setAnswers(rules: PluginAnswer[]): void;
  calls(): PluginCall[];
  cleanup(): void;
}

export function opencodePlugin(rules: PluginAnswer[] = [], o: { sessions?: boolean } = {}): OpencodePlugin {
  const dir = makeTempDir('plugin');
  writeFileSync(join(dir, 'calls.jsonl'), '');
  const setAnswers = (r: PluginAnswer[]): void => writeFileSync(join(dir, 'answers.json'), JSON.stringify(r));
  setAnswers(rules);
  return {
    dir,
    files: { '.config/opencode/plugin/tally-test-recorder.js': PLUGIN(dir, o.sessions === true) },
    setAnswers,
    calls: () =>
      readFileSync(join(dir, 'calls.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as PluginCall),
    cleanup: () => removeTempDir(dir),
  };
}
