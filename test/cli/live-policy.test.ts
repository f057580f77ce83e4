/** Live policy follows only the verified certificate the session started under. */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from './tally-process.js';

const rm = JSON.stringify({
  type: 'tool.before',
  call: { id: 'c1' },
  path: 'native',
  tool: { origin: 'native', name: 'Bash', kind: 'shell', input: { command: 'rm -rf build' } },
});

describe('live policy', () => {
  it('an edited session certificate stops recording instead of changing the policy', async () => {
    const p = makeProject('tally-live-');
    assert.equal((await p.tally(['init'])).code, 0);
    const reg = ['agent', 'register', '--name', 'coder', '--allow', 'Read', '--forbid', 'Bash(rm -rf *)'];
    assert.equal((await p.tally(reg)).code, 0);
    const session = jsonOut(await p.tally(['session', 'start', '--agent', 'coder', '--json']))
      .session as string;
    const denied = await p.tally(['session', 'event', '--json'], { stdin: rm });
    assert.equal(denied.code, 1);
    assert.equal((jsonOut(denied).decision as { decision: string }).decision, 'deny');

    // Rewrite the session's copy so that rm -rf would be allowed; the signature no longer matches.
    const certPath = join(p.root, '.tally/sessions', session, 'certificate.json');
    const envelope = JSON.parse(readFileSync(certPath, 'utf8'));
    const payload = JSON.parse(Buffer.from(envelope.payload, 'base64').toString());
    payload.forbidden = [];
    payload.bounded_actions = ['Bash(*)'];
    envelope.payload = Buffer.from(JSON.stringify(payload)).toString('base64');
    writeFileSync(certPath, JSON.stringify(envelope));
    const log = join(p.root, '.tally/sessions', session, 'events.log');
    const size = statSync(log).size;
    const after = await p.tally(['session', 'event', '--json'], { stdin: rm });
    // A copy that fails its check is a verification failure (exit 1), and nothing is recorded.
    assert.equal(after.code, 1);
    assert.match(after.stderr, /does not verify with the ship key/);
    assert.equal(statSync(log).size, size, 'nothing was recorded');
  });
});
