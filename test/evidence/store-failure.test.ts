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
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

describe('a log whose torn tail cannot be set aside', () => {
  it('is not opened, and leaves no partial copy of the torn bytes beside it', () => {
    const dir = tempDir('tally-store-quarantine-');
    const path = join(dir, 'events.log');
    // A torn last line (no newline) longer than the process may write to a new file.
    writeFileSync(path, 'x'.repeat(8192));
    const open = `const { FileRecordStore } = await import(${JSON.stringify(STORE)});
const store = await FileRecordStore.open(process.argv[1]);
await store.close();`;
    assert.throws(
      () =>
        execFileSync(
          'sh',
          ['-c', 'ulimit -f 1 && exec "$0" --input-type=module -e "$1" "$2"', process.execPath, open, path],
          {
            stdio: 'pipe',
          },
        ),
      /EFBIG/,
    );
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('.torn-')),
      [],
    );
    assert.equal(readFileSync(path, 'utf8'), 'x'.repeat(8192), 'the torn bytes are still in the log');
    // With room again, the open sets them aside under the first name.
    execFileSync(process.execPath, ['--input-type=module', '-e', open, path]);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('.torn-')),
      ['events.log.torn-0'],
    );
    assert.equal(readFileSync(join(dir, 'events.log.torn-0'), 'utf8'), 'x'.repeat(8192));
  });
});
