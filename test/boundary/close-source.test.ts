/**
 * The reconcile pass's own `file.changed` is read by the receipt once the summary of the attempt it
 * names claims it. A channel that could write one under the pass's source, naming the attempt the
 * close will use, would have the receipt show a change as the pass's measure of the tree. The
 * boundary refuses a channel that names a source only the close writes, whatever the event's
 * type, and records nothing for it. Oracle: the records the store holds afterwards.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundaryError } from '../../src/boundary/prepare.js';
import { openFixture } from './fixture.js';

const report = {
  type: 'file.changed',
  changes: [{ path: 'a.txt', operation: 'create', agentCaused: false }],
  extensions: { 'dev.tally.reconcile': { attempt: '0123456789abcdef' } },
};

describe('a channel speaking as the close’s reconcile pass', () => {
  for (const source of ['git-reconcile', 'transcript'])
    it(`a file.changed under source ${source}, naming an attempt, is refused and not recorded`, async () => {
      const f = await openFixture(null, null);
      try {
        const refused = (error: unknown) => error instanceof BoundaryError && error.code === 'close-source';
        await assert.rejects(f.boundary.observe(report, { source }), refused);
        await assert.rejects(f.boundary.decide(report, { source }), refused);
        assert.deepEqual(await f.records(), []);
      } finally {
        await f.close();
      }
    });
});
