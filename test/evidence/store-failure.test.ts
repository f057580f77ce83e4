/**
 * The store's contract (src/evidence/log/store.ts): after a failed append every later one fails
 * too, appends already queued included, so a chain never gets a gap. Oracle: a real write error
 * from the kernel — the store runs in a process whose file size limit is one block (`ulimit -f 1`:
 * its lock file fits, a line of 4 KiB does not), where a write past the limit fails with EFBIG
 * (Node.js ignores SIGXFSZ). A device such as /dev/full is no log: the store refuses to open one
 * (core/regular-file.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../temp.js';

const STORE = new URL('../../src/evidence/log/file-store.js', import.meta.url).href;

/** Appends three lines at once and a fourth after them, in a process that cannot grow a file. */
const SCRIPT = `
const { FileRecordStore, StoreError } = await import(${JSON.stringify(STORE)});
const store = await FileRecordStore.open(process.argv[1]);
const line = (i) => Buffer.from('{"n":' + i + ',"pad":"' + 'x'.repeat(4096) + '"}\\n');
const outcome = (r) => ({
  status: r.status,
  failed: r.reason instanceof StoreError ? r.reason.code : String(r.reason),
  message: r.reason?.message,
});
const queued = await Promise.allSettled([1, 2, 3].map((i) => store.append([line(i)])));
const [later] = await Promise.allSettled([store.append([line(4)])]);
await store.close().catch(() => undefined);
process.stdout.write(JSON.stringify({ queued: queued.map(outcome), later: outcome(later) }));
`;

describe('a log store whose write fails', () => {
  it('fails that append, every one queued with it and every one after it', () => {
    const path = join(tempDir('tally-store-failure-'), 'events.log');
    const out = execFileSync(
      'sh',
      ['-c', 'ulimit -f 1 && exec "$0" --input-type=module -e "$1" "$2"', process.execPath, SCRIPT, path],
      { encoding: 'utf8' },
    );
    const { queued, later } = JSON.parse(out) as {
      queued: { status: string; failed: string; message: string }[];
      later: { status: string; failed: string };
    };
    assert.equal(queued.length, 3);
    for (const r of queued) {
      assert.equal(r.status, 'rejected');
      assert.equal(r.failed, 'write-failed', r.message);
      assert.match(r.message, /EFBIG/);
    }
    assert.equal(later.status, 'rejected');
    assert.equal(later.failed, 'write-failed');
  });
});
