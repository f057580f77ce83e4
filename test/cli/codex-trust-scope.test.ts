/**
 * Only Codex's managed hooks need no trust, and which scope a file is comes from the install, not
 * from where the file is: a `$CODEX_HOME` under /etc holds user hooks, which Codex lists as
 * `source: "user"` and skips until trusted (measured with the pinned Codex). Oracle: the trust step
 * must ask Codex — here `/bin/false`, so it fails saying so — instead of answering `managed`.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { INSTALLERS } from '../../src/cli/installers.js';

const codex = INSTALLERS.codex!;
const context = (scope: 'user' | 'managed') => ({
  bin: '/bin/false',
  scope,
  hooks: {},
  env: { PATH: process.env.PATH ?? '' },
  cwd: tmpdir(),
});

describe('Codex trust by scope', () => {
  it('a user hooks file under /etc is trusted through Codex, not taken for the managed one', async () => {
    await assert.rejects(
      codex.afterWrite!('/etc/codex-home/hooks.json', context('user')),
      /\/bin\/false app-server/,
    );
  });

  it('the managed scope needs no trust, and Codex is not asked', async () => {
    assert.deepEqual(await codex.afterWrite!('/etc/codex/hooks.json', context('managed')), {
      trust: 'managed',
    });
  });
});
