/**
 * Claude Code's http hooks, the channel Tally's capture uses: what is sent (headers with
 * environment variables), for which events, and what a failing hook server does with and without
 * `onFailure: "block"`.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type HttpAnswer, type HttpHook, httpHook } from './hooks.js';
import { call, text } from './model/script.js';
import { asArray, asRecord } from './model/server.js';
import { makeRepo } from './repo.js';
import { type AgentRun, runAgent } from './runner.js';
import { leftovers } from './temp.js';

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'];

async function withHttp(
  answers: HttpAnswer[],
  hookFields: (h: HttpHook, event: string) => Record<string, unknown>,
  body: (r: AgentRun, h: HttpHook, dir: string) => void,
  options: { down?: boolean; env?: Record<string, string> } = {},
): Promise<void> {
  const repo = makeRepo();
  const h = await httpHook(answers);
  try {
    const hooks = Object.fromEntries(
      EVENTS.map((e) => [
        e,
        [{ matcher: '', hooks: [{ type: 'http', url: h.urlFor(e), ...hookFields(h, e) }] }],
      ]),
    );
    if (options.down) await h.close();
    const r = await runAgent({
      agent: 'claude-code',
      cwd: repo.dir,
      prompt: 'Write a.txt.',
      script: [call('Write', { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' }), text('All done.')],
      settings: { hooks },
      env: options.env ?? {},
    });
    assert.equal(r.exitCode, 0, r.stderr);
    body(r, h, repo.dir);
  } finally {
    if (!options.down) await h.close();
    repo.cleanup();
  }
}

function firstToolResult(r: AgentRun): string {
  const block = asArray(asRecord(r.requests[1]?.body)?.messages)
    .flatMap((m) => asArray(asRecord(m)?.content))
    .map((b) => asRecord(b) ?? {})
    .find((b) => b.type === 'tool_result');
  return JSON.stringify(block?.content);
}

describe('Claude Code http hooks (real CLI)', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('POST the hook JSON for every event but SessionStart, with headers expanded from allowedEnvVars only', async (t) => {
    await withHttp(
      [],
      () => ({
        headers: {
          Authorization: 'Bearer $TALLY_TEST_TOKEN',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own ${VAR} syntax
          'X-Braced': '${TALLY_TEST_TOKEN}-b',
          'X-Unlisted': '[$TALLY_TEST_OTHER]',
        },
        allowedEnvVars: ['TALLY_TEST_TOKEN'],
      }),
      (r, h) => {
        t.diagnostic(
          `http hooks: ${h.calls.map((c) => c.label).join(' ')}; headers: ${JSON.stringify(h.calls[0]?.headers)}`,
        );
        assert.deepEqual(
          h.calls.map((c) => c.label),
          ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'],
        );
        for (const c of h.calls) {
          assert.equal(c.method, 'POST');
          assert.equal(c.headers['content-type'], 'application/json');
          assert.equal(c.headers.authorization, 'Bearer secret-value');
          assert.equal(c.headers['x-braced'], 'secret-value-b');
          assert.equal(c.headers['x-unlisted'], '[]', 'a variable not listed expands to nothing');
          assert.equal(c.payload.hook_event_name, c.label);
        }
        assert.deepEqual(r.egress, []);
      },
      { env: { TALLY_TEST_TOKEN: 'secret-value', TALLY_TEST_OTHER: 'not-sent' } },
    );
  });

  it('an unreachable hook server fails open: the Write runs', async () => {
    await withHttp(
      [],
      () => ({}),
      (_r, _h, dir) => assert.equal(existsSync(join(dir, 'a.txt')), true),
      { down: true },
    );
  });

  it('with onFailure "block" on PreToolUse an unreachable server blocks the Write, and says why', async () => {
    await withHttp(
      [],
      (_h, e) => (e === 'PreToolUse' ? { onFailure: 'block' } : {}),
      (r, _h, dir) => {
        assert.equal(existsSync(join(dir, 'a.txt')), false);
        assert.match(firstToolResult(r), /blocking because onFailure is \\"block\\".*ECONNREFUSED/);
      },
      { down: true },
    );
  });

  it('with onFailure "block" on UserPromptSubmit an unreachable server blocks the prompt: no model call at all', async () => {
    await withHttp(
      [],
      (_h, e) => (e === 'UserPromptSubmit' ? { onFailure: 'block' } : {}),
      (r, _h, dir) => {
        assert.deepEqual(r.requests, []);
        assert.equal(existsSync(join(dir, 'a.txt')), false);
        // Exit 0 and is_error false: only the result text says the prompt never ran.
        assert.equal(asRecord(r.json)?.is_error, false);
        assert.match(String(asRecord(r.json)?.result), /^UserPromptSubmit operation blocked by hook:/);
      },
      { down: true },
    );
  });

  it('with onFailure "block" an answer of 500 blocks the Write', async () => {
    await withHttp(
      [{ label: 'PreToolUse', status: 500, body: 'boom' }],
      (_h, e) => (e === 'PreToolUse' ? { onFailure: 'block' } : {}),
      (r, _h, dir) => {
        assert.equal(existsSync(join(dir, 'a.txt')), false);
        assert.match(firstToolResult(r), /HTTP 500 from/);
      },
    );
  });
});
