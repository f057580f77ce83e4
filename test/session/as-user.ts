/**
 * The real `tally` command run as another user, for what only bites without root's rights (a file
 * or folder the agent made unreadable): the tests run as root here, so a child process drops to
 * uid 65534 (as a normal user the child runs as that user). A run that does not end in time is
 * killed with its whole process group and reported as hung.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Receipt } from '../../src/evidence/receipt/receipt.js';
import { TALLY_BIN } from '../cli/tally-process.js';

/** The user a root test drops to. */
export const OTHER_UID = 65534;

function dropped(): { uid: number; gid: number } | Record<string, never> {
  return process.getuid?.() === 0 ? { uid: OTHER_UID, gid: OTHER_UID } : {};
}

/**
 * Hands `dir` (recursively) to the user the child runs as, and lets it pass through the folder that
 * holds `dir` (the test run's temporary folder is root's own).
 */
export function handOver(dir: string): void {
  if (process.getuid?.() !== 0) return;
  execFileSync('chown', ['-R', `${OTHER_UID}:${OTHER_UID}`, dir]);
  const parent = dirname(dir);
  chmodSync(parent, statSync(parent).mode | 0o111);
  reachable(TALLY_BIN);
}

/**
 * Lets the other user pass through every folder above `path` (search only, nothing listed or
 * read): a checkout in root's own temporary folder (`mktemp -d` makes it 0700) would otherwise
 * keep it from starting `tally` at all.
 */
function reachable(path: string): void {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
    if (dirname(dir) === dir) return;
  }
}

export interface UserRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Killed after `killAfterMs`: it had not ended. */
  hung: boolean;
}

/** Runs `tally args` as the other user (unless `asRoot`), killed with its process group after `killAfterMs`. */
export function tallyAs(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; killAfterMs?: number; asRoot?: boolean },
): Promise<UserRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TALLY_BIN, ...args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.asRoot ? {} : dropped()),
    });
    let stdout = '';
    let stderr = '';
    let hung = false;
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      hung = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, options.killAfterMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, hung });
    });
  });
}

/** The receipt a package's seal carries. */
export function receiptOfFile(pkg: string): Receipt {
  const lines = readFileSync(pkg, 'utf8').trimEnd().split('\n');
  const seal = JSON.parse(lines.at(-1)!) as { receipt: { payload: string } };
  return JSON.parse(Buffer.from(seal.receipt.payload, 'base64').toString('utf8')) as Receipt;
}

/** The `dev.tally.reconcile` summary of a package. */
export function summaryOfFile(pkg: string): Record<string, unknown> {
  for (const line of readFileSync(pkg, 'utf8').trimEnd().split('\n').slice(1, -1)) {
    const envelope = JSON.parse(line) as { payload: string };
    const record = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as {
      event: { type: string; extensions?: Record<string, Record<string, unknown>> };
    };
    if (record.event.type === 'tally.reconcile.summary')
      return record.event.extensions!['dev.tally.reconcile']!;
  }
  throw new Error(`${pkg} holds no reconcile summary`);
}
