/**
 * The stdio binding with real child processes: framing, one message in flight, restart after a
 * crash, the backend's environment and cwd, stderr kept out of parsing, per_event rules, shutdown.
 * Oracles: the stdio binding's rules (one object per line; at most one outstanding request per
 * persistent backend; per_event: one message, EOF, at most one response, exit 0) and the process
 * rules (no shell, smallest practical environment, literal `env` strings).
 */
import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createTransport } from '../../src/ahp/transports/index.js';
import { INHERITED_ENV_NAMES } from '../../src/ahp/transports/stdio-process.js';
import {
  codeOf,
  interceptRequest,
  isAlive,
  never,
  options,
  recordingLogger,
  stdioBackend,
  tempDir,
} from './transport-helpers.js';

type Answer = { id: unknown; result: Record<string, unknown> };

describe('stdio persistent', { timeout: 30_000 }, () => {
  test('answers are correlated by id and one process serves many requests', async () => {
    const t = createTransport(stdioBackend('echo'), options());
    try {
      const a = interceptRequest();
      const b = interceptRequest();
      const ra = (await t.request(a, never())) as Answer;
      const rb = (await t.request(b, never())) as Answer;
      assert.equal(ra.id, a.id);
      assert.equal(rb.id, b.id);
      assert.deepStrictEqual(ra.result.echo, a.params);
      assert.equal(ra.result.pid, rb.result.pid, 'same long-lived process');
    } finally {
      await t.close();
    }
  });

  test('concurrent requests are queued: never two outstanding at the backend', async () => {
    const t = createTransport(stdioBackend('slow', ['30']), options());
    try {
      const requests = [1, 2, 3, 4].map(() => interceptRequest());
      const answers = (await Promise.all(requests.map((r) => t.request(r, never())))) as Answer[];
      answers.forEach((answer, i) => {
        assert.equal(answer.id, requests[i]!.id);
        assert.equal(answer.result.overlap, false, 'the backend saw an overlapping request');
      });
    } finally {
      await t.close();
    }
  });

  test('stderr reaches the logger and never the protocol parser', async () => {
    const { logger, lines } = recordingLogger();
    const t = createTransport(stdioBackend('echo'), options({ logger }));
    try {
      const req = interceptRequest();
      assert.equal(((await t.request(req, never())) as Answer).id, req.id);
      assert.ok(lines.some((l) => String(l.fields?.line).includes('diagnostics, not protocol')));
    } finally {
      await t.close();
    }
  });

  test('the environment is the inherited minimum plus literal env strings; cwd is honoured', async () => {
    const cwd = tempDir();
    const env = { TALLY_LITERAL: '$HOME and $' + '{PATH}', TALLY_EMPTY: '' };
    const opts = options({
      env: { ...process.env, TALLY_PARENT_SECRET: 'must-not-leak', PATH: process.env.PATH ?? '/usr/bin' },
    });
    const t = createTransport(stdioBackend('env', [], 'persistent', { cwd, env }), opts);
    try {
      const answer = (await t.request(interceptRequest(), never())) as Answer;
      const childEnv = answer.result.env as Record<string, string>;
      assert.equal(childEnv.TALLY_LITERAL, '$HOME and $' + '{PATH}', 'no expansion');
      assert.equal(childEnv.TALLY_EMPTY, '');
      assert.equal(childEnv.TALLY_PARENT_SECRET, undefined);
      assert.equal(childEnv.TALLY_HOME, undefined);
      assert.equal(childEnv.PATH, opts.env.PATH);
      for (const name of Object.keys(childEnv)) {
        assert.ok(INHERITED_ENV_NAMES.includes(name) || name in env, `unexpected variable ${name}`);
      }
      assert.equal(realpathSync(String(answer.result.cwd)), realpathSync(cwd));
    } finally {
      await t.close();
    }
  });

  test('a crash fails the request in flight; the next request restarts the process', async () => {
    const marker = join(tempDir(), 'crashed');
    const t = createTransport(stdioBackend('crash-once', [marker]), options());
    try {
      assert.equal(await codeOf(t.request(interceptRequest(), never())), 'transport');
      const req = interceptRequest();
      const answer = (await t.request(req, never())) as Answer;
      assert.equal(answer.id, req.id);
      assert.equal(readFileSync(marker, 'utf8'), 'crashed\n');
    } finally {
      await t.close();
    }
  });

  test('close() ends a request waiting out the restart backoff, as closed', async () => {
    // A backend that exits on every request: each crash doubles the wait before the next start.
    const t = createTransport(stdioBackend('exit', ['3']), options());
    for (let i = 0; i < 3; i++)
      assert.equal(await codeOf(t.request(interceptRequest(), never())), 'transport');
    let code: string | undefined;
    const waiting = codeOf(t.request(interceptRequest(), never())).then((c) => {
      code = c;
    });
    await new Promise((resolve) => setImmediate(resolve)); // it is now in the backoff (200 ms)
    await t.close();
    // Settled by the close itself, before the event loop reaches its timers again.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(code, 'closed');
    await waiting;
  });

  test('a command that cannot start is a transport failure', async () => {
    const backend = stdioBackend('echo');
    if (backend.transport.kind === 'stdio') backend.transport.command = join(tempDir(), 'no-such-program');
    const t = createTransport(backend, options());
    try {
      assert.equal(await codeOf(t.request(interceptRequest(), never())), 'transport');
    } finally {
      await t.close();
    }
  });

  test('notifications share the line stream and are never answered', async () => {
    const log = join(tempDir(), 'lines');
    const t = createTransport(stdioBackend('notify-log', [log]), options());
    try {
      const note = {
        jsonrpc: '2.0' as const,
        method: 'hooks/observe',
        params: { protocolVersion: 'draft', event: { id: 'n1' } },
      };
      await t.notify(note, never());
      const req = interceptRequest();
      assert.equal(((await t.request(req, never())) as Answer).id, req.id);
      const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
      assert.equal(lines.length, 2);
      assert.deepStrictEqual(JSON.parse(lines[0]!), note);
      assert.equal('id' in JSON.parse(lines[0]!), false);
      assert.deepStrictEqual(JSON.parse(lines[1]!), req);
    } finally {
      await t.close();
    }
  });

  test('close ends a backend that ignores EOF and SIGTERM (SIGKILL after the grace period)', async () => {
    const { logger, lines } = recordingLogger();
    const t = createTransport(stdioBackend('stubborn'), options({ logger }));
    const pending = t.request(interceptRequest(), never());
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (lines.some((l) => String(l.fields?.line).includes('got'))) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    const pid = lines.find((l) => l.message === 'backend started')?.fields?.pid as number;
    assert.ok(isAlive(pid));
    const settled = codeOf(pending);
    await t.close();
    assert.equal(await settled, 'closed');
    assert.equal(isAlive(pid), false);
    assert.equal(await codeOf(t.request(interceptRequest(), never())), 'closed');
  });
});

describe('stdio per_event', { timeout: 30_000 }, () => {
  test('one process per message: one line in, one line out, exit 0', async () => {
    const t = createTransport(stdioBackend('echo', [], 'per_event'), options());
    const a = (await t.request(interceptRequest(), never())) as Answer;
    const b = (await t.request(interceptRequest(), never())) as Answer;
    assert.notEqual(a.result.pid, b.result.pid);
    await t.close();
  });

  test('a non-zero exit fails even after a well-formed answer', async () => {
    const t = createTransport(stdioBackend('one-shot', ['3'], 'per_event'), options());
    assert.equal(await codeOf(t.request(interceptRequest(), never())), 'transport');
    const ok = createTransport(stdioBackend('one-shot', ['0'], 'per_event'), options());
    const req = interceptRequest();
    assert.equal(((await ok.request(req, never())) as Answer).id, req.id);
  });

  test('a missing response, two responses or an unterminated line are protocol failures', async () => {
    for (const mode of ['silent-exit', 'two-lines', 'no-newline', 'garbage']) {
      const t = createTransport(stdioBackend(mode, [], 'per_event'), options());
      assert.equal(await codeOf(t.request(interceptRequest(), never())), 'protocol', mode);
    }
  });

  test('a notification is delivered and its exit status cannot fail it', async () => {
    const log = join(tempDir(), 'lines');
    const t = createTransport(stdioBackend('notify-log', [log], 'per_event'), options());
    await t.notify(
      { jsonrpc: '2.0', method: 'hooks/observe', params: { protocolVersion: 'draft' } },
      never(),
    );
    assert.equal(readFileSync(log, 'utf8').trimEnd().split('\n').length, 1);
    const failing = createTransport(stdioBackend('exit', ['5'], 'per_event'), options());
    await failing.notify(
      { jsonrpc: '2.0', method: 'hooks/observe', params: { protocolVersion: 'draft' } },
      never(),
    );
  });
});
