/**
 * Projects for tests whose hooks start a recorder: each made with the recorder's idle time given,
 * its set-up commands run in order (each must succeed), and the recorder of every project made
 * stopped when the file's tests end. Call `recorderProjects()` once, at the top of a test file.
 */
import assert from 'node:assert/strict';
import { after } from 'node:test';
import { makeProject, type Project } from '../cli/tally-process.js';

export type MakeRecorderProject = (prefix: string, steps?: string[][], idleMs?: number) => Promise<Project>;

/** `tally init`, then the certificate `coder` with these `--allow`/`--forbid` flags. */
export function certified(...flags: string[]): string[][] {
  return [['init'], ['agent', 'register', '--name', 'coder', ...flags]];
}

export function recorderProjects(): MakeRecorderProject {
  const made: Project[] = [];
  after(async () => {
    for (const p of made) await p.tally(['recorder', 'stop']);
  });
  return async (prefix, steps = [['init']], idleMs = 20_000) => {
    const p = makeProject(prefix);
    p.env.TALLY_RECORDER_IDLE_MS = String(idleMs);
    made.push(p);
    for (const args of steps) {
      const ran = await p.tally(args);
      assert.equal(ran.code, 0, `tally ${args.join(' ')}: ${ran.stderr}`);
    }
    return p;
  };
}
