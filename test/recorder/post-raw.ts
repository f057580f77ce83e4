/**
 * One POST of raw bytes to a project's recorder on 127.0.0.1, with the secret from its Tally home:
 * the status and body as received; and the requests tests build on it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Project } from '../cli/tally-process.js';

export function postRaw(
  p: Project,
  path: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const { port } = JSON.parse(readFileSync(join(p.home, 'recorder.json'), 'utf8')) as { port: number };
  const secret = readFileSync(join(p.home, 'run', 'recorder.secret'), 'utf8').trim();
  const data = Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          'content-length': data.length,
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** A Claude Code hook payload of harness session `harness` in the project, as its http hooks post it. */
export const claudeHook = (
  p: Project,
  harness: string,
  event: string,
  fields: Record<string, unknown> = {},
) => JSON.stringify({ session_id: harness, cwd: p.root, hook_event_name: event, ...fields });

/** The tool fields of a hook payload for a Bash call `call` running `ls`. */
export const bashCall = (call: string) => ({
  tool_name: 'Bash',
  tool_input: { command: 'ls' },
  tool_use_id: call,
});

/** Starts a session through the recorder (`POST /sessions` with `body`), which must accept it: its id. */
export async function startThroughRecorder(p: Project, body: Record<string, unknown>): Promise<string> {
  const started = await postRaw(p, '/sessions', JSON.stringify(body));
  assert.equal(started.status, 200, started.body);
  return (JSON.parse(started.body) as { session: string }).session;
}
