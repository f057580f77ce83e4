/**
 * Opens that never wait, and git with a deadline. Oracles: the kernel (a FIFO opened for reading
 * waits for a writer, one opened for writing without a reader fails with ENXIO, `/dev/zero` never
 * ends) and git itself (it opens `.git/config` to find a repository, and so waits on a FIFO there).
 * Each call below would block this test process for good without the module's care; here each one
 * returns, with an error that names the file or the command.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GitError, gitTimeoutMs, runGit } from '../../src/core/git.js';
import {
  appendRegularFileSync,
  openRegular,
  RegularFileError,
  readRegularFileSync,
  writeRegularFileSync,
} from '../../src/core/regular-file.js';
import { tempDir } from '../temp.js';

const dir = tempDir('tally-regular-file-');
const fifo = join(dir, 'fifo');
execFileSync('mkfifo', [fifo]);

after(() => {
  // Whatever may still wait on the FIFO is let go.
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {}
});

function refused(kind: RegExp): (error: unknown) => boolean {
  return (error) =>
    error instanceof RegularFileError &&
    error.code === 'not-regular' &&
    kind.test(String(error.detail?.kind));
}

describe('regular files only, never waited on', () => {
  it('refuses a FIFO and a character device for reading, naming what each is', async () => {
    assert.throws(() => readRegularFileSync(fifo, 1024), refused(/FIFO/));
    assert.throws(() => readRegularFileSync('/dev/zero', 1024), refused(/character device/));
    await assert.rejects(openRegular(fifo), refused(/FIFO/));
  });

  it('refuses a FIFO for writing, with a reader (it opens) and without one (ENXIO)', () => {
    assert.throws(() => writeRegularFileSync(fifo, 'x'), refused(/FIFO/));
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      assert.throws(() => writeRegularFileSync(fifo, 'x'), refused(/FIFO/));
      assert.throws(() => appendRegularFileSync(fifo, 'x'), refused(/FIFO/));
    } finally {
      closeSync(reader);
    }
  });

  it('reads a regular file whole, refuses one over the bound, and writes one in place', () => {
    const path = join(dir, 'file');
    writeRegularFileSync(path, 'hello world');
    writeRegularFileSync(path, 'hi');
    assert.equal(readRegularFileSync(path, 2).toString(), 'hi');
    appendRegularFileSync(path, '!');
    assert.throws(
      () => readRegularFileSync(path, 2),
      (e) => e instanceof RegularFileError && e.code === 'too-large',
    );
    assert.throws(() => readRegularFileSync(join(dir, 'missing'), 2), { code: 'ENOENT' });
  });
});

/** Pids of git processes whose working directory is `cwd`. */
function gitsIn(cwd: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return (
          readFileSync(`/proc/${n}/cmdline`, 'utf8').startsWith('git') &&
          readlinkSync(`/proc/${n}/cwd`) === cwd
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('git with a deadline', () => {
  it('stops a git that waits on a FIFO at .git/config, and says so', async () => {
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    const config = join(repo, '.git', 'config');
    execFileSync('rm', [config]);
    execFileSync('mkfifo', [config]);
    try {
      await assert.rejects(
        runGit(['rev-parse', '--show-toplevel'], { cwd: repo, timeoutMs: 300 }),
        (e) =>
          e instanceof GitError &&
          e.code === 'timeout' &&
          /git rev-parse in .* did not finish within 300 ms/.test(e.message),
      );
      // Killed: gone once the kernel has delivered the signal (a moment after the rejection).
      for (let i = 0; i < 100 && gitsIn(repo).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(gitsIn(repo), [], 'the git that waited was killed');
    } finally {
      try {
        closeSync(openSync(config, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {}
    }
  });

  it("answers a git that runs, and tells git's own failure from a missing directory", async () => {
    const repo = join(dir, 'plain');
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, 'a'), 'a');
    assert.equal((await runGit(['rev-parse', '--show-toplevel'], { cwd: repo })).toString().trim(), repo);
    await assert.rejects(runGit(['rev-parse', '--verify', 'HEAD'], { cwd: repo }), { code: 'failed' });
    await assert.rejects(runGit(['status'], { cwd: join(dir, 'nowhere') }), { code: 'failed' });
  });

  it('takes its deadline from TALLY_GIT_TIMEOUT_MS, and refuses one that is not a number', () => {
    assert.equal(gitTimeoutMs({}), 10_000);
    assert.equal(gitTimeoutMs({ TALLY_GIT_TIMEOUT_MS: '250' }), 250);
    assert.throws(() => gitTimeoutMs({ TALLY_GIT_TIMEOUT_MS: '1e3' }), { code: 'bad-timeout' });
  });
});
