/**
 * Codex runs a non-managed hook only once it is trusted: `[hooks.state."<key>"] trusted_hash` in the
 * user's config.toml must equal the hook's current hash (key = "<source file>:<event>:<group>:<handler>",
 * hash = "sha256:…" of the hook's normalized definition). Codex computes both and hands them out
 * through its app-server (`hooks/list`), and writes config through it (`config/batchWrite`) — the
 * path its own /hooks review screen takes. This client does the same, so no hash is computed here.
 */
import { spawn } from 'node:child_process';

export interface CodexHook {
  key: string;
  eventName: string;
  command?: string;
  currentHash: string;
  trustStatus: 'managed' | 'untrusted' | 'trusted' | 'modified';
  isManaged: boolean;
  enabled: boolean;
  source: string;
  sourcePath: string;
}

interface RpcMessage {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { message?: string };
}

/** Sends requests to `codex app-server` over stdio (JSONL) and returns the responses by id. */
async function appServer(
  bin: string,
  cwd: string,
  env: Record<string, string>,
  requests: { method: string; params: unknown }[],
): Promise<Map<number, RpcMessage>> {
  const child = spawn(bin, ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const answers = new Map<number, RpcMessage>();
  let buffer = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`codex app-server did not answer in 30 s; stderr: ${stderr.slice(0, 500)}`));
    }, 30_000);
    child.on('exit', () => {
      clearTimeout(timer);
      if (answers.size < requests.length + 1) {
        reject(new Error(`codex app-server exited early; stderr: ${stderr.slice(0, 500)}`));
      } else resolve();
    });
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffer += d;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const msg = JSON.parse(line) as RpcMessage;
          if (typeof msg.id === 'number' && msg.method === undefined) answers.set(msg.id, msg);
        } catch {
          // Not a protocol line.
        }
      }
      if (answers.size >= requests.length + 1) child.stdin.end();
    });
  });
  const send = (msg: RpcMessage): void => {
    child.stdin.write(`${JSON.stringify(msg)}\n`);
  };
  send({ method: 'initialize', id: 0, params: { clientInfo: { name: 'tally-agent-tests', version: '0' } } });
  send({ method: 'initialized' });
  requests.forEach((r, i) => {
    send({ method: r.method, id: i + 1, params: r.params });
  });
  try {
    await done;
  } finally {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const [id, answer] of answers) {
    if (answer.error)
      throw new Error(`codex app-server request ${id} failed: ${answer.error.message ?? '?'}`);
  }
  return answers;
}

/** Every hook Codex sees for cwd, with its key, current hash and trust status. */
export async function listCodexHooks(
  bin: string,
  cwd: string,
  env: Record<string, string>,
): Promise<CodexHook[]> {
  const answers = await appServer(bin, cwd, env, [{ method: 'hooks/list', params: { cwds: [cwd] } }]);
  const result = answers.get(1)?.result as { data?: { hooks?: CodexHook[] }[] } | undefined;
  return result?.data?.flatMap((d) => d.hooks ?? []) ?? [];
}

/**
 * Trusts every untrusted or modified hook (as a person would in /hooks): records its current hash
 * in the user's config.toml through the app-server. Returns the hooks as Codex then lists them.
 */
export async function trustCodexHooks(
  bin: string,
  cwd: string,
  env: Record<string, string>,
): Promise<CodexHook[]> {
  const hooks = await listCodexHooks(bin, cwd, env);
  const pending = hooks.filter((h) => h.trustStatus === 'untrusted' || h.trustStatus === 'modified');
  if (pending.length > 0) {
    const state = Object.fromEntries(pending.map((h) => [h.key, { trusted_hash: h.currentHash }]));
    await appServer(bin, cwd, env, [
      {
        method: 'config/batchWrite',
        params: { edits: [{ keyPath: 'hooks.state', value: state, mergeStrategy: 'upsert' }] },
      },
    ]);
  }
  return listCodexHooks(bin, cwd, env);
}

/**
 * The config Codex reads from the project `.codex/config.toml` of each directory (`config/read`
 * with its layers): what Codex itself parsed, whether or not it would load it (an untrusted
 * project's layer is listed with its `disabledReason`).
 */
export async function codexProjectLayers(
  bin: string,
  cwds: string[],
  env: Record<string, string>,
): Promise<{ config: Record<string, unknown>; disabledReason?: string | null }[]> {
  const answers = await appServer(
    bin,
    cwds[0]!,
    env,
    cwds.map((cwd) => ({ method: 'config/read', params: { cwd, includeLayers: true } })),
  );
  return cwds.map((cwd, i) => {
    const result = answers.get(i + 1)?.result as
      | { layers?: { name: { type: string; dotCodexFolder?: string }; config: Record<string, unknown> }[] }
      | undefined;
    const layer = result?.layers?.find(
      (l) => l.name.type === 'project' && l.name.dotCodexFolder === `${cwd}/.codex`,
    );
    if (!layer)
      throw new Error(`Codex read no project config in ${cwd}: ${JSON.stringify(result).slice(0, 400)}`);
    return layer;
  });
}
