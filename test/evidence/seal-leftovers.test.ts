/**
 * A sealing process killed before it renamed its temporary package into place leaves
 * `<package>.<pid>.tmp` behind. The next seal of the same package removes the leftovers of
 * processes that no longer run, and leaves alone the one of a process that still does (another
 * seal at work) and every other file. Real processes give the pids: one that has exited, one that runs.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { generateKeyPair, keyId } from '../../src/core/keys.js';
import { LogWriter } from '../../src/evidence/log/writer.js';
import { sealLog } from '../../src/evidence/package/seal.js';
import { makeProject } from '../cli/tally-process.js';
import { removeTempDir, tempDir } from '../temp.js';

const { privateKey } = generateKeyPair();
const signer = { privateKey, keyId: keyId(privateKey) };
const running = spawn('sleep', ['60'], { stdio: 'ignore' });
after(() => running.kill('SIGKILL'));

describe('sealing removes what killed seals left', () => {
  it("a dead process's temporary package goes; a running one's and other files stay", async () => {
    const dir = tempDir('tally-seal-leftovers-');
    const logPath = join(dir, 'events.log');
    const log = await LogWriter.open(logPath, { session: 'ses_leftovers', signer });
    const base = { time: '2026-01-01T00:00:00Z', source: 'urn:test', session: { cwd: '/repo' } };
    await log.append({ source: 'hook', event: { ...base, id: 'e0', type: 'session.start' } });
    await log.append({
      source: 'hook',
      event: { ...base, id: 'e1', type: 'session.end', outcome: 'completed' },
    });
    await log.close();
    const out = join(dir, 'ses_leftovers.tally');
    const dead = spawnSync('true').pid!;
    const leftovers = {
      dead: `ses_leftovers.tally.${dead}.tmp`,
      live: `ses_leftovers.tally.${running.pid}.tmp`,
      other: 'ses_other.tally.1.tmp',
      notPid: 'ses_leftovers.tally.x1.tmp',
    };
    for (const name of Object.values(leftovers)) writeFileSync(join(dir, name), 'half a package');
    await sealLog({ logPath, outPath: out, session: 'ses_leftovers', records: 2, signer });
    assert.ok(existsSync(out));
    assert.deepEqual(
      readdirSync(dir).sort(),
      ['events.log', 'ses_leftovers.tally', leftovers.live, leftovers.notPid, leftovers.other].sort(),
    );
  });

  it('a folder or a link under a leftover’s name is no leftover: the close seals and leaves both', async () => {
    const p = makeProject('tally-seal-leftover-dir-');
    try {
      const ok = async (args: string[]) => {
        const ran = await p.tally(args);
        assert.equal(ran.code, 0, `tally ${args.join(' ')}: ${ran.stderr}`);
        return ran.stdout.trim().split('\n').pop()!;
      };
      await ok(['init']);
      const id = await ok(['session', 'start']);
      const packages = join(p.root, '.tally', 'packages');
      const dead = spawnSync('true').pid!;
      const gone = spawnSync('true').pid!;
      // What the agent puts where a killed seal's temporary package would be.
      const folder = join(packages, `${id}.tally.${dead}.tmp`);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'kept'), 'kept\n');
      const outside = join(p.dir, 'outside.txt');
      writeFileSync(outside, 'outside\n');
      symlinkSync(outside, join(packages, `${id}.tally.${gone}.tmp`));
      const pkg = await ok(['session', 'close']);
      assert.equal(pkg, join(packages, `${id}.tally`));
      assert.equal((await p.tally(['verify', pkg])).code, 0);
      assert.equal(readFileSync(join(folder, 'kept'), 'utf8'), 'kept\n');
      assert.equal(readFileSync(join(packages, `${id}.tally.${gone}.tmp`), 'utf8'), 'outside\n');
    } finally {
      removeTempDir(p.dir);
    }
  });
});
