/**
 * Codex runs a user hook only once it is trusted: its key (`<file>:<event>:<group>:<handler>`)
 * recorded in config.toml's `[hooks.state]` with the hook's current hash. Codex computes both; its
 * app-server (JSONL over stdio) lists them (`hooks/list`) and writes the trust
 * (`config/batchWrite` on `hooks.state`, upserted) — what its own /hooks review screen does. Tally
 * trusts exactly its own hooks this way, in the file it wrote, and nothing of the user's.
 */
import { spawn } from 'node:child_process';
import { CaptureError } from '../types.js';

export interface CodexHookEntry {
  key: string;
  command?: string;
  currentHash: string;
  trustStatus: string;
  sourcePath?: string;
}

interface Message {
  id?: number;
  method?: string;
  result?: unknown;
  error?: { message?: string };
}

/** Answers to `requests`, sent after the handshake, by their position. */
async function ask(
  codex: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  requests: { method: string; params: unknown }[],
): Promise<unknown[]> {
  const child = spawn(codex, ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const answers = new Map<number, Message>();
  let pending = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const finished = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new CaptureError(
          'bad-payload',
          `codex app-server did not answer within 30 s: ${stderr.slice(0, 300)}`,
        ),
      );
    }, 30_000);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new CaptureError('bad-payload', `cannot start ${codex} app-server: ${error.code ?? error.message}`),
      );
    });
    child.once('exit', () => {
      clearTimeout(timer);
      if (answers.size > requests.length) resolve();
      else reject(new CaptureError('bad-payload', `codex app-server exited early: ${stderr.slice(0, 300)}`));
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
        if (typeof message.id === 'number' && message.method === undefined) answers.set(message.id, message);
      }
      if (answers.size > requests.length) child.stdin.end();
    });
  });
  const send = (m: unknown): void => {
    child.stdin.write(`${JSON.stringify(m)}\n`);
  };
  send({ id: 0, method: 'initialize', params: { clientInfo: { name: 'tally', version: '0' } } });
  send({ method: 'initialized' });
  requests.forEach((r, i) => {
    send({ id: i + 1, method: r.method, params: r.params });
  });
  await finished;
  return requests.map((_, i) => {
    const answer = answers.get(i + 1);
    if (answer?.error)
      throw new CaptureError(
        'bad-payload',
        `codex app-server: ${requests[i]!.method}: ${answer.error.message ?? 'failed'}`,
      );
    return answer?.result;
  });
}

export async function listCodexHooks(
  codex: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<CodexHookEntry[]> {
  const [result] = await ask(codex, env, cwd, [{ method: 'hooks/list', params: { cwds: [cwd] } }]);
  const data = (result as { data?: { hooks?: CodexHookEntry[] }[] } | undefined)?.data ?? [];
  return data.flatMap((d) => d.hooks ?? []);
}

/**
 * Trusts the hooks `ours` picks (Tally's, in the file it wrote) that are untrusted or modified;
 * returns every hook as Codex lists it afterwards.
 */
export async function trustCodexHooks(
  codex: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  ours: (hook: CodexHookEntry) => boolean,
): Promise<CodexHookEntry[]> {
  const listed = await listCodexHooks(codex, env, cwd);
  const pending = listed.filter(
    (h) => ours(h) && (h.trustStatus === 'untrusted' || h.trustStatus === 'modified'),
  );
  if (pending.length > 0)
    await ask(codex, env, cwd, [
      {
        method: 'config/batchWrite',
        params: {
          edits: [
            {
              keyPath: 'hooks.state',
              value: Object.fromEntries(pending.map((h) => [h.key, { trusted_hash: h.currentHash }])),
              mergeStrategy: 'upsert',
            },
          ],
        },
      },
    ]);
  return listCodexHooks(codex, env, cwd);
}
