/**
 * The log's lock (`<log>.lock`) is released only where it is and only if it is still the file this
 * lock created: after the folder holding the log was renamed while the lock was held, the lock
 * file that moved with it is removed; a lock file someone else put at the path since is left.
 * Oracles: the kernel's rename and the files' (dev, ino).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { acquireLock } from '../../src/evidence/log/lock.js';
import { tempDir } from '../temp.js';

describe('the log lock', () => {
  it('is released where its folder went, and nowhere else', async () => {
    const dir = tempDir('tally-lock-moved-');
    mkdirSync(join(dir, 'a'));
    const log = join(dir, 'a', 'events.log');
    const lock = await acquireLock(log, 1000);
    assert.ok(existsSync(`${log}.lock`));
    renameSync(join(dir, 'a'), join(dir, 'b'));
    // Another process's lock where the old folder was: not this lock's to remove.
    mkdirSync(join(dir, 'a'));
    writeFileSync(`${log}.lock`, '1\n');
    lock.release(join(dir, 'b', 'events.log'));
    assert.equal(existsSync(join(dir, 'b', 'events.log.lock')), false);
    assert.equal(existsSync(`${log}.lock`), true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves a lock file that is not the one it created', async () => {
    const dir = tempDir('tally-lock-replaced-');
    const log = join(dir, 'events.log');
    const lock = await acquireLock(log, 1000);
    // Moved aside (not deleted: its inode number is not free for the new file to take).
    renameSync(`${log}.lock`, `${log}.lock.old`);
    writeFileSync(`${log}.lock`, '1\n');
    lock.release();
    assert.equal(existsSync(`${log}.lock`), true);
    rmSync(dir, { recursive: true, force: true });
  });
});
