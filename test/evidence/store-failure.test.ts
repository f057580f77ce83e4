/**
 * The store's contract (src/evidence/log/store.ts): after a failed append every later one fails
 * too, appends already queued included, so a chain never gets a gap. Oracle: a real write error
 * from the kernel — the log is a link to /dev/full, where every write fails with ENOSPC.
 */
import assert from 'node:assert/strict';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FileRecordStore, StoreError } from '../../src/evidence/log/file-store.js';
import { tempDir } from '../temp.js';

describe('a log store whose write fails', { skip: !existsSync('/dev/full') && 'no /dev/full here' }, () => {
  it('fails that append, every one queued with it and every one after it', async () => {
    const path = join(tempDir('tally-store-failure-'), 'events.log');
    symlinkSync('/dev/full', path);
    const store = await FileRecordStore.open(path);
    try {
      const line = (i: number) => Buffer.from(`{"n":${i}}\n`);
      const queued = await Promise.allSettled([1, 2, 3].map((i) => store.append([line(i)])));
      for (const r of queued) {
        assert.equal(r.status, 'rejected');
        assert.ok(r.reason instanceof StoreError && r.reason.code === 'write-failed', String(r.reason));
        assert.match(r.reason.message, /ENOSPC/);
      }
      await assert.rejects(
        store.append([line(4)]),
        (e: Error) => e instanceof StoreError && e.code === 'write-failed',
      );
    } finally {
      await store.close().catch(() => undefined);
    }
  });
});
