/**
 * Codex runs a user hook only once it is trusted: its key (`<file>:<event>:<group>:<handler>`)
 * recorded in config.toml's `[hooks.state]` with the hook's current hash. Codex computes both; its
 * app-server (JSONL over stdio) lists them (`hooks/list`) and writes the trust
 * (`config/batchWrite` on `hooks.state`, upserted) — what its own /hooks review screen does. Tally
 * trusts exactly its own hooks this way, in the file it wrote, and nothing of the user's; one of its
 * own that the state switched off (`enabled = false`, which Codex skips even when trusted) is
 * switched on in the same write.
 */
import { spawn } from 'node:child_process';
import { CaptureError } from '../types.js';

export interface CodexHookEntry {
  key: string;
  eventName?: string;
  handlerType?: string;
  command?: string;
  async?: boolean;
  matcher?: string | null;
  timeoutSec?: number;
  statusMessage?: string | null;
  additionalContextLimit?: number | null;
  currentHash: string;
  trustStatus: string;
  /** False when `[hooks.state]` in config.toml switched it off: Codex then skips it, trusted or not. */
  enabled?: boolean;
  sourcePath?: string;
}

interface Message {
  id?: number;
  method?: string;
  result?: unknown;
  error?: { message?: string };
}

type Request = (method: string, params: unknown) => Promise<unknown>;

/**
 * One `codex app-server` for a conversation: after the handshake, `use` sends requests one after
 * another, each answered before the next is chosen; then the server's stdin is closed and its
 * exit awaited. One process for a whole trust (list, write, list again): each start of the
 * native binary costs hundreds of milliseconds.
 */
export async function withAppServer<T>(
  codex: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  use: (request: Request) => Promise<T>,
): Promise<T> {
  const child = spawn(codex, ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  let failure: Error | undefined;
  let pending = '';
  let stderr = '';
  const fail = (error: Error): void => {
    failure ??= error;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
  };
  /** The child is gone or deaf: said with what it wrote on stderr. */
  const gone = (why: string) => {
    const said = stderr.trim().slice(0, 300);
    return new CaptureError('bad-payload', `${codex} app-server ${why}${said ? `: ${said}` : ''}`);
  };
  // A child that exits at once closes its pipes under us: every pipe's error is the conversation's.
  // The reason is given once its stderr has ended (what it said may come after its exit), and
  // names its exit when it has exited by then.
  let inputError: string | undefined;
  const afterStderr = (then: () => void) => {
    if (child.stderr.readableEnded) then();
    else child.stderr.once('end', then).once('close', then);
  };
  const ended = () => {
    if (child.exitCode !== null || child.signalCode !== null)
      fail(gone(`exited (${child.signalCode ?? `code ${child.exitCode}`}) before it answered`));
    else if (inputError !== undefined)
      fail(gone(`stopped reading its input (${inputError}) before it answered`));
  };
  child.stdin.on('error', (error: NodeJS.ErrnoException) => {
    inputError = error.code ?? error.message;
    afterStderr(ended);
  });
  child.stdout.on('error', (error: Error) => fail(gone(`could not be read (${error.message})`)));
  child.stderr.on('error', () => {});
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    pending += d;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      let message: Message;
      try {
        message = JSON.parse(line) as Message;
      } catch {
        continue;
      }
      if (typeof message.id !== 'number' || message.method !== undefined) continue;
      waiting.get(message.id)?.resolve(message);
      waiting.delete(message.id);
    }
  });
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      fail(
        new CaptureError('bad-payload', `cannot start ${codex} app-server: ${error.code ?? error.message}`),
      );
      resolve();
    });
    child.once('exit', () => {
      afterStderr(ended);
      resolve();
    });
  });
  const timer = setTimeout(() => {
    fail(gone('did not answer within 30 s'));
    child.kill('SIGKILL');
  }, 30_000);
  let next = 0;
  const write = (message: unknown) => {
    if (failure === undefined && child.stdin.writable) child.stdin.write(`${JSON.stringify(message)}\n`);
  };
  const send = (method: string, params: unknown): Promise<Message> => {
    const id = next++;
    const answer = new Promise<Message>((resolve, reject) => {
      if (failure) reject(failure);
      else waiting.set(id, { resolve, reject });
    });
    write({ id, method, params });
    return answer;
  };
  const request: Request = async (method, params) => {
    const answer = await send(method, params);
    if (answer.error)
      throw new CaptureError(
        'bad-payload',
        `codex app-server: ${method}: ${answer.error.message ?? 'failed'}`,
      );
    return answer.result;
  };
  try {
    const handshake = send('initialize', { clientInfo: { name: 'tally', version: '0' } });
    write({ method: 'initialized' });
    await handshake;
    return await use(request);
  } finally {
    // A child that failed the conversation is not waited for.
    if (failure !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child.stdin.end();
    await exited;
    clearTimeout(timer);
  }
}

function hooksOf(result: unknown): CodexHookEntry[] {
  const data = (result as { data?: { hooks?: CodexHookEntry[] }[] } | undefined)?.data ?? [];
  return data.flatMap((d) => d.hooks ?? []);
}

export async function listCodexHooks(
  codex: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<CodexHookEntry[]> {
  return withAppServer(codex, env, cwd, async (request) =>
    hooksOf(await request('hooks/list', { cwds: [cwd] })),
  );
}

/**
 * Trusts the hooks `ours` picks (Tally's, in the file it wrote) that are untrusted or modified, and
 * switches on those switched off; returns every hook as Codex lists it afterwards.
 */
export async function trustCodexHooks(
  codex: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  ours: (hook: CodexHookEntry) => boolean,
): Promise<CodexHookEntry[]> {
  return withAppServer(codex, env, cwd, async (request) => {
    const list = async () => hooksOf(await request('hooks/list', { cwds: [cwd] }));
    const listed = await list();
    const pending = listed.filter(
      (h) =>
        ours(h) && (h.trustStatus === 'untrusted' || h.trustStatus === 'modified' || h.enabled === false),
    );
    if (pending.length === 0) return listed;
    await request('config/batchWrite', {
      edits: [
        {
          keyPath: 'hooks.state',
          value: Object.fromEntries(
            pending.map((h) => [
              h.key,
              { trusted_hash: h.currentHash, ...(h.enabled === false ? { enabled: true } : {}) },
            ]),
          ),
          mergeStrategy: 'upsert',
        },
      ],
    });
    return list();
  });
}
