/** `tally agent register --control-plane`: the certificate field, and the live verdict it gives a write to `.claude/settings.json`. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from './tally-process.js';

const write = JSON.stringify({
  type: 'tool.before',
  call: { id: 'c1' },
  path: 'native',
  tool: { origin: 'native', name: 'Write', input: { file_path: '.claude/settings.json', content: '{}' } },
});

describe('the control plane from the command line', () => {
  it('ask by default, deny or allow when the certificate says so, and nothing else is accepted', async () => {
    const p = makeProject('tally-plane-cli-');
    assert.equal((await p.tally(['init'])).code, 0);
    const base = ['agent', 'register', '--allow', 'Write', '--json'];
    const asking = jsonOut(await p.tally([...base, '--name', 'asker']));
    assert.equal((asking.certificate as Record<string, unknown>).control_plane, undefined);
    for (const mode of ['deny', 'allow']) {
      const issued = jsonOut(await p.tally([...base, '--name', `${mode}er`, '--control-plane', mode]));
      assert.equal((issued.certificate as Record<string, unknown>).control_plane, mode);
    }
    const bad = await p.tally([...base, '--name', 'other', '--control-plane', 'maybe']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--control-plane must be ask, deny or allow/);

    for (const [agent, decision] of [
      ['asker', 'ask'],
      ['denyer', 'deny'],
      ['allower', 'allow'],
    ] as const) {
      assert.equal((await p.tally(['session', 'start', '--agent', agent, '--json'])).code, 0);
      const answer = jsonOut(await p.tally(['session', 'event', '--json'], { stdin: write }));
      assert.equal((answer.decision as { decision: string }).decision, decision, agent);
      assert.equal((await p.tally(['session', 'close'])).code, 0);
    }
  });
});
