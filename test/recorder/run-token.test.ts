/**
 * The tokens `tally run` hands its agent's http hooks, and `tally recorder env` the hooks `tally
 * install` writes, instead of the recorder's secret. Claude Code posts its http hooks to whoever
 * listens on the recorder's port, so a listener that takes the port while the recorder is down
 * learns what the hooks send: with a run token, that session's hooks and nothing else; with the
 * installed hooks' token, the hooks. Oracle: the derivations docs/recorder.md gives (computed here
 * with node:crypto), and the endpoints it names.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodedPayloads, jsonOut, type Project, runTally } from '../cli/tally-process.js';
import { logContent } from '../log-content.js';
import { recorderProjects } from './projects.js';

const project = recorderProjects();

function documentedToken(secret: string, session: string): string {
  return `run_${createHmac('sha256', secret).update(`tally-run-token/v1\0${session}`).digest('hex')}`;
}

function recorderOf(p: Project): { port: number; secret: string } {
  const home = String(p.env.TALLY_HOME);
  return {
    port: (JSON.parse(readFileSync(join(home, 'recorder.json'), 'utf8')) as { port: number }).port,
    secret: readFileSync(join(home, 'run', 'recorder.secret'), 'utf8').trim(),
  };
}

async function post(
  port: number,
  method: string,
  path: string,
  token: string,
  session: string | undefined,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(session === undefined ? {} : { 'x-tally-session': session }),
      'content-type': 'application/json',
    },
    ...(method === 'GET' ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

/** A session started in the project and held by a recorder that a SessionStart through the shim started. */
async function heldSession(p: Project, harness: string): Promise<string> {
  const started = jsonOut(await p.tally(['session', 'start', '--json'])).session as string;
  const shim = await runTally(['hook', 'claude-code'], {
    cwd: p.root,
    env: { ...p.env, TALLY_SESSION: started },
    stdin: JSON.stringify({
      session_id: harness,
      cwd: p.root,
      hook_event_name: 'SessionStart',
      source: 'startup',
    }),
  });
  assert.equal(shim.code, 0, shim.stderr);
  return started;
}

/** A prompt of harness session `harness` posted with `token`; it must be recorded in `session`'s log. */
async function promptRecorded(
  p: Project,
  port: number,
  token: string,
  header: string | undefined,
  session: string,
  harness: string,
  words: string,
): Promise<void> {
  const prompt = {
    session_id: harness,
    cwd: p.root,
    hook_event_name: 'UserPromptSubmit',
    prompt: words,
    transcript_path: join(p.dir, 'none.jsonl'),
  };
  const hooked = await post(port, 'POST', '/hooks/claude-code', token, header, prompt);
  assert.equal(hooked.status, 200, hooked.text);
  const log = join(p.root, '.tally', 'sessions', session, 'events.log');
  assert.match(decodedPayloads(logContent(log)), new RegExp(words));
}

describe("a run's token", () => {
  it("is taken for its own session's hooks and nothing else", async () => {
    const p = await project('tally-run-token-');
    const started = await heldSession(p, 'harness-1');
    const { port, secret } = recorderOf(p);
    const token = documentedToken(secret, started);
    await promptRecorded(p, port, token, started, started, 'harness-1', 'token-prompt');
    const prompt = { session_id: 'harness-1', cwd: p.root, hook_event_name: 'UserPromptSubmit' };
    const log = join(p.root, '.tally', 'sessions', started, 'events.log');

    // Another session's id with this token, no session, a token of another secret: not let in.
    const elsewhere = 'ses_20261207T000000Z_00000000';
    for (const [t, s] of [
      [token, elsewhere],
      [token, undefined],
      [documentedToken('0'.repeat(64), started), started],
    ] as const) {
      const refused = await post(port, 'POST', '/hooks/claude-code', t, s, { ...prompt, prompt: 'refused' });
      assert.equal(refused.status, 401, `${s}: ${refused.text}`);
    }
    // Every endpoint but the hooks wants the secret itself.
    for (const [method, path, body] of [
      ['GET', '/status', undefined],
      ['POST', '/sessions/close', { session: started }],
      ['POST', '/sessions', { cwd: p.root }],
      ['POST', '/ingest', { source: 'x', event: {} }],
      ['POST', '/stop', {}],
    ] as const) {
      const refused = await post(port, method, path, token, started, body);
      assert.equal(refused.status, 403, `${method} ${path}: ${refused.text}`);
      assert.match(refused.text, /for the hooks only/);
    }
    assert.doesNotMatch(decodedPayloads(logContent(log)), /refused/);
    const status = await post(port, 'GET', '/status', secret, undefined, undefined);
    assert.equal(status.status, 200, 'the recorder stopped or the secret was refused');
    assert.ok(
      (JSON.parse(status.text) as { sessions: { session: string }[] }).sessions.some(
        (s) => s.session === started,
      ),
    );
  });

  it('is what tally run puts in its agent’s environment, never the secret', async () => {
    const p = await project('tally-run-token-env-');
    const seen = join(p.dir, 'env.json');
    // The agent keeps what its environment holds and reports a prompt over its http hook with it.
    writeFileSync(
      join(p.dir, 'agent.cjs'),
      `const { readFileSync, writeFileSync } = require('node:fs');
const env = process.env;
writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ token: env.TALLY_RECORDER_SECRET, session: env.TALLY_SESSION }));
const port = JSON.parse(readFileSync(env.TALLY_HOME + '/recorder.json', 'utf8')).port;
fetch('http://127.0.0.1:' + port + '/hooks/claude-code', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + env.TALLY_RECORDER_SECRET, 'x-tally-session': env.TALLY_SESSION, 'content-type': 'application/json' },
  body: JSON.stringify({ session_id: 'h1', cwd: process.cwd(), hook_event_name: 'UserPromptSubmit', prompt: 'hi', transcript_path: '/nonexistent' }),
}).then((r) => process.exit(r.status === 200 ? 0 : 3));
`,
    );
    // The run puts Claude Code's --settings after the command's name: a shell script drops them.
    const agent = join(p.dir, 'agent');
    writeFileSync(agent, `#!/bin/sh\nexec "${process.execPath}" "${join(p.dir, 'agent.cjs')}"\n`, {
      mode: 0o755,
    });
    const ran = await p.tally(['run', '--json', '--harness', 'claude-code', '--', agent]);
    assert.equal(ran.code, 0, ran.stderr);
    const { token, session } = JSON.parse(readFileSync(seen, 'utf8')) as { token: string; session: string };
    const { secret } = recorderOf(p);
    assert.notEqual(token, secret);
    assert.equal(token, documentedToken(secret, session));
  });
  it('the installed hooks’ token from tally recorder env: the hooks of any session, nothing else', async () => {
    const p = await project('tally-hooks-token-');
    const started = await heldSession(p, 'harness-2');
    const { port, secret } = recorderOf(p);
    const token = jsonOut(await p.tally(['recorder', 'env', '--json'])).TALLY_RECORDER_SECRET as string;
    assert.notEqual(token, secret);
    assert.equal(
      token,
      `hooks_${createHmac('sha256', secret).update('tally-hooks-token/v1\0').digest('hex')}`,
    );
    await promptRecorded(p, port, token, undefined, started, 'harness-2', 'installed-prompt');
    for (const [method, path] of [
      ['GET', '/status'],
      ['POST', '/stop'],
    ] as const) {
      const refused = await post(port, method, path, token, undefined, method === 'GET' ? undefined : {});
      assert.equal(refused.status, 403, `${method} ${path}: ${refused.text}`);
    }
  });
});
