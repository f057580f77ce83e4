/**
 * `tally session start` (writing the log itself, no recorder involved) and a start through the
 * recorder (`tally run`'s) in one project at the same moment: at most one of them opens a session,
 * and the one that does is the project's current session. Each attempt fires the recorder's start
 * at another delay after the CLI's, so one of them lands while the other is starting. Oracle: the
 * sessions' own session.json files and `sessions/current`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RecorderClient } from '../../src/recorder/client.js';
import { makeProject } from '../cli/tally-process.js';

const p = makeProject('tally-start-race-');
after(() => p.tally(['recorder', 'stop']));

function openSessions(): string[] {
  const dir = join(p.root, '.tally', 'sessions');
  return readdirSync(dir)
    .filter((f) => f.startsWith('ses_'))
    .filter(
      (id) =>
        (JSON.parse(readFileSync(join(dir, id, 'session.json'), 'utf8')) as { state: string }).state ===
        'open',
    );
}

describe('two session starts in one project from two processes', () => {
  it('never leave two sessions open', async () => {
    assert.equal((await p.tally(['init'])).code, 0);
    const client = await RecorderClient.of(p.home, p.env);
    await client.ensure({ env: p.env });
    for (const delay of [0, 50, 100, 150, 200, 250, 300, 350, 400, 450]) {
      const cli = p.tally(['session', 'start']);
      await new Promise((r) => setTimeout(r, delay));
      const viaRecorder = await client.request('POST', '/sessions', { cwd: p.root });
      const ran = await cli;
      const open = openSessions();
      assert.ok(
        open.length <= 1,
        `delay ${delay} ms: ${open.length} sessions open (${open.join(', ')}); the CLI said: ${ran.stderr.trim()}; the recorder: ${JSON.stringify(viaRecorder.body)}`,
      );
      const current = readFileSync(join(p.root, '.tally', 'sessions', 'current'), 'utf8').trim();
      assert.deepEqual(open, [current]);
      assert.equal((ran.code === 0 ? 1 : 0) + (viaRecorder.status === 200 ? 1 : 0), 1, `delay ${delay} ms`);
      assert.equal((await p.tally(['session', 'close'])).code, 0);
    }
  });
});
