/**
 * The cost of reconciliation at close and of `tally wrap`'s snapshot, on a git repository of
 * 20,000 committed files (1 KiB each, 200 folders) of which 200 are modified, 100 deleted and 100
 * created during the "session"; and of the baseline the session start takes on the same tree. Baselines measured in the same run on the same tree: `git status
 * --porcelain -uall` (what git itself needs to find the changed paths) for the reconcile pass, and
 * reading and SHA-256-hashing every listed file in one loop for the snapshot.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { captureBaseline } from '../src/capture/reconcile/baseline.js';
import { diffWorkspace } from '../src/capture/reconcile/reconcile.js';
import { RECENT_MS } from '../src/capture/reconcile/stat.js';
import { listTree, snapshotTree } from '../src/capture/reconcile/workspace.js';
import { type BenchModule, type BenchResult, seconds } from './harness.js';

const FILES = 20_000;
const DIRS = 200;

function git(root: string, ...args: string[]): void {
  execFileSync(
    'git',
    ['-c', 'user.name=b', '-c', 'user.email=b@example.invalid', '-c', 'commit.gpgsign=false', ...args],
    {
      cwd: root,
      stdio: 'ignore',
    },
  );
}

async function best(fn: () => unknown, rounds = 3): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rounds; i++) min = Math.min(min, await seconds(fn));
  return min;
}

const bench: BenchModule = {
  title: 'reconciliation at close and the wrap snapshot',
  async run(): Promise<BenchResult[]> {
    const root = mkdtempSync(join(tmpdir(), 'tally-bench-reconcile-'));
    try {
      const body = 'x'.repeat(1023);
      for (let d = 0; d < DIRS; d++) mkdirSync(join(root, `d${d}`));
      for (let i = 0; i < FILES; i++) writeFileSync(join(root, `d${i % DIRS}`, `f${i}.txt`), `${i}${body}\n`);
      git(root, 'init', '-q');
      git(root, 'add', '.');
      git(root, 'commit', '-qm', 'tree');
      // The session start's side: the baseline taken before the agent runs (the tree still clean),
      // once the files are older than a stat can vouch for, as in a tree not written just now.
      await sleep(RECENT_MS);
      const start = await best(() => captureBaseline(root));
      const { baseline, stat } = await captureBaseline(root);
      for (let i = 0; i < 200; i++) writeFileSync(join(root, `d${i % DIRS}`, `f${i}.txt`), `changed ${i}\n`);
      for (let i = 200; i < 300; i++) unlinkSync(join(root, `d${i % DIRS}`, `f${i}.txt`));
      for (let i = 0; i < 100; i++) writeFileSync(join(root, `d${i}`, `new${i}.txt`), `new ${i}\n`);

      let changes = 0;
      const reconcile = await best(async () => {
        changes = (await diffWorkspace(root, baseline, stat ? { startStat: stat } : {})).changes.length;
      });
      const status = await best(() =>
        execFileSync('git', ['status', '--porcelain', '-uall'], { cwd: root, maxBuffer: 1 << 28 }),
      );
      let files = 0;
      const snapshot = await best(async () => {
        files = (await snapshotTree(root, true)).files.size;
      });
      // The files that exist (the listing also names the deleted ones still in git's index).
      const listed = (await listTree(root, true)).paths.filter((p) => existsSync(join(root, p)));
      const hashing = await best(() => {
        for (const p of listed)
          createHash('sha256')
            .update(readFileSync(join(root, p)))
            .digest();
      });
      const ms = (s: number) => `${(s * 1000).toFixed(0)} ms`;
      return [
        {
          name: `start baseline, ${FILES} files`,
          measured: ms(start),
          baseline: `git status -uall ${ms(status)}`,
          ratio: start / status,
          target: 'report',
        },
        {
          name: `reconcile pass, ${FILES} files, ${changes} changes`,
          measured: ms(reconcile),
          baseline: `git status -uall ${ms(status)}`,
          ratio: reconcile / status,
          target: 'report',
        },
        {
          name: `wrap snapshot, ${files} files`,
          measured: ms(snapshot),
          baseline: `read + SHA-256 of the same files ${ms(hashing)}`,
          ratio: snapshot / hashing,
          target: 'report',
        },
      ];
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};

export default bench;
