/**
 * `tally run` verifies its own session's package, not whatever the recorder's answer names. The
 * agent runs as the user and can take the recorder's port: here a server that is not the recorder
 * answers the close with the path of another, genuine, verified package. Oracle: the run must not
 * print that package as this session's, and must exit 1.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from './tally-process.js';

describe('tally run and the recorder it talks to', () => {
  it('does not verify another session’s package in place of its own', async () => {
    const p = makeProject('tally-run-answer-');
    assert.equal((await p.tally(['init'])).code, 0);
    assert.equal((await p.tally(['session', 'start'])).code, 0);
    const other = jsonOut(await p.tally(['session', 'close', '--json'])).package as string;
    assert.equal((await p.tally(['verify', other])).code, 0, 'the other package is genuine');
    const state = join(p.root, '.tally');
    const session = 'ses_20261204T000000Z_0a1b2c3d';
    // What the real recorder makes when it opens a session: the run writes its wiring there.
    mkdirSync(join(state, 'sessions', session), { recursive: true });
    const fake = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body =
          req.url === '/status'
            ? { pid: process.pid, started_at: new Date().toISOString(), sessions: [] }
            : req.url === '/sessions'
              ? { session, state, root: p.root }
              : req.url === '/sessions/close'
                ? { session, package: other, records: 3 }
                : { error: { code: 'not-found', message: req.url } };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const port = (fake.address() as AddressInfo).port;
      writeFileSync(join(String(p.env.TALLY_HOME), 'recorder.json'), JSON.stringify({ port }));
      const ran = await p.tally(['run', '--harness', 'claude-code', '--', 'true']);
      assert.equal(ran.code, 1, ran.stderr);
      assert.match(ran.stderr, /not this session's package/);
      assert.doesNotMatch(ran.stderr, /VERIFIED/);
    } finally {
      fake.close();
    }
  });
});
