/** An agent name given on the command line is input like any other: a secret in it is never recorded. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodedPayloads, makeProject, toolEvent } from './tally-process.js';

const TOKEN = `ghp_${'Zq9Xw8Vu7T'.repeat(4)}`;

describe('agent names are redacted', () => {
  it('tally session event --agent with a token in the name records no token', async () => {
    const p = makeProject('tally-agentname-');
    assert.equal((await p.tally(['init'])).code, 0);
    assert.equal((await p.tally(['session', 'start'])).code, 0);
    const ran = await p.tally(['session', 'event', '--source', 'hook', '--agent', `helper.${TOKEN}`], {
      stdin: toolEvent('c1', 'Read', { file_path: 'README.md' }, 'read'),
    });
    assert.equal(ran.code, 0, ran.stderr);
    const id = readFileSync(join(p.root, '.tally/sessions/current'), 'utf8').trim();
    const log = readFileSync(join(p.root, '.tally/sessions', id, 'events.log'));
    const seen = decodedPayloads(log);
    assert.match(seen, /"agent":\{"name":"helper./, 'the attribution is recorded');
    assert.ok(!seen.includes(TOKEN.slice(4)), 'the token is not');
  });
});
