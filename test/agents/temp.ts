/**
 * Temp dirs and agent processes that must not outlive a test. Everything made here is tracked, and
 * whatever a test forgets is removed (dirs) or killed (process trees) when the test process exits,
 * so a run of the agent tests leaves no temp dir and no process behind.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs = new Set<string>();
const markers = new Set<string>();

/** A fresh directory under the system temp dir (real path: agents report resolved paths). */
export function makeTempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `tally-agents-${prefix}-`)));
  dirs.add(dir);
  return dir;
}

/**
 * Removes a tracked dir. A process that was just killed may still be writing into it for a moment
 * (SIGKILL is delivered asynchronously), so the removal is repeated until the dir stays gone.
 */
export function removeTempDir(dir: string): void {
  for (let attempt = 0; attempt < 20; attempt++) {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    if (!existsSync(dir)) {
      dirs.delete(dir);
      return;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  throw new Error(`cannot remove ${dir}: something keeps writing into it`);
}

/** The environment variable every process of one agent run inherits, so stragglers can be found. */
export const MARKER_VAR = 'TALLY_AGENT_RUN_MARKER';

export function registerMarker(marker: string): void {
  markers.add(marker);
}

/**
 * Pids of live processes whose environment carries MARKER_VAR=marker. An agent may put children in
 * process groups or sessions of their own (shells, servers), which a group kill misses; the
 * inherited environment still names the run that started them.
 */
export function processesWithMarker(marker: string): number[] {
  const needle = `${MARKER_VAR}=${marker}`;
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (env.split('\0').includes(needle)) found.push(Number(entry));
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  return found;
}

/** Kills the process group led by pid, then every process still carrying the run's marker. */
export function killRun(pid: number | undefined, marker: string): void {
  if (pid !== undefined) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const straggler of processesWithMarker(marker)) {
    try {
      process.kill(straggler, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** killRun, then waits (up to timeoutMs) until the group and every marked process are gone. */
export async function killRunAndWait(
  pid: number | undefined,
  marker: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    killRun(pid, marker);
    const alive = (pid !== undefined && groupAlive(pid)) || processesWithMarker(marker).length > 0;
    if (!alive) return;
    if (Date.now() > deadline) throw new Error(`agent processes of run ${marker} survive SIGKILL`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function forgetMarker(marker: string): void {
  markers.delete(marker);
}

/** What is still tracked (and, for dirs, still on disk): a test can assert that nothing is left. */
export function leftovers(): { dirs: string[]; processes: number[] } {
  return {
    dirs: [...dirs].filter((d) => existsSync(d)),
    processes: [...markers].flatMap((m) => processesWithMarker(m)),
  };
}

process.on('exit', () => {
  for (const marker of markers) killRun(undefined, marker);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
