/**
 * The start-of-session baseline: git HEAD and the content digests of files that are already dirty or
 * untracked, so that reconciliation at close blames the session only for what changed after it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { digest } from '../core/hash.js';

export interface Baseline {
  commit?: string;
  /** repo-relative POSIX path → "sha256:<hex>" of the content, or null when the file is deleted. */
  dirty: Record<string, string | null>;
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch {
    return null;
  }
}

export function captureBaseline(root: string): Baseline {
  const baseline: Baseline = { dirty: {} };
  const head = git(root, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  if (head) baseline.commit = head.trim();
  const status = git(root, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames']);
  if (!status) return baseline;
  const paths = status
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3))
    .filter((path) => !path.startsWith('.tally/'))
    .sort();
  for (const path of paths) {
    try {
      baseline.dirty[path] = digest(readFileSync(join(root, path)));
    } catch {
      baseline.dirty[path] = null;
    }
  }
  return baseline;
}
