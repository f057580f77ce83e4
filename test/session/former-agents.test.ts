/**
 * The project's memory of which agent judged each harness session (docs/formats.md, "Former
 * agents"): the file's shape is read here as the format says, independently of the reader.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FORMER_KEPT_PER_PROJECT, formerAgentOf, keepFormerAgent } from '../../src/session/former-agents.js';
import { tempDir } from '../temp.js';

function state(): string {
  const dir = join(tempDir('tally-former-'), '.tally');
  mkdirSync(join(dir, 'sessions'), { recursive: true });
  return dir;
}

const file = (s: string) => join(s, 'sessions', 'former-agents.json');

describe('former agents kept on disk', () => {
  it('keeps the latest agent of each harness session, private to the user, in the documented shape', () => {
    const s = state();
    assert.equal(formerAgentOf(s, 'h1'), undefined);
    keepFormerAgent(s, ['h1', 'h2'], 'coder');
    keepFormerAgent(s, ['h1'], 'reviewer');
    assert.equal(formerAgentOf(s, 'h1'), 'reviewer');
    assert.equal(formerAgentOf(s, 'h2'), 'coder');
    assert.equal(statSync(file(s)).mode & 0o777, 0o600);
    const doc = JSON.parse(readFileSync(file(s), 'utf8'));
    assert.deepEqual(doc, {
      type: 'tally/former-agents/v1',
      agents: [
        { harness_session: 'h2', agent: 'coder' },
        { harness_session: 'h1', agent: 'reviewer' },
      ],
    });
  });

  it('forgets the oldest past its bound', () => {
    const s = state();
    const many = Array.from({ length: FORMER_KEPT_PER_PROJECT + 5 }, (_, i) => `h${i}`);
    keepFormerAgent(s, many, 'coder');
    assert.equal(formerAgentOf(s, 'h4'), undefined);
    assert.equal(formerAgentOf(s, 'h5'), 'coder');
    assert.equal(JSON.parse(readFileSync(file(s), 'utf8')).agents.length, FORMER_KEPT_PER_PROJECT);
  });

  it('says a damaged file is damaged, ignores entries that name no valid agent, and replaces it on the next seal', () => {
    const s = state();
    writeFileSync(file(s), '{"type":"something-else"}');
    assert.throws(
      () => formerAgentOf(s, 'h1'),
      /former-agents\.json is not a tally\/former-agents\/v1 document/,
    );
    writeFileSync(
      file(s),
      JSON.stringify({
        type: 'tally/former-agents/v1',
        agents: [{ harness_session: 'h1', agent: '../../etc' }, { harness_session: 'h2' }, null],
      }),
    );
    assert.equal(formerAgentOf(s, 'h1'), undefined);
    writeFileSync(file(s), 'not json');
    keepFormerAgent(s, ['h3'], 'coder');
    assert.equal(formerAgentOf(s, 'h3'), 'coder');
  });
});
