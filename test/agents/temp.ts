/**
 * Temp dirs and agent processes that must not outlive a test. Everything made here is tracked, and
 * whatever a test forgets is removed (dirs) or killed (process trees) when the test process exits,
 * so a run of the agent tests leaves no temp dir and no process behind.
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
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

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
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

export function forgetMarker(marker: string): void {
  markers.delete(marker);
}

/** What is still tracked: a test can assert that nothing is left. */
export function leftovers(): { dirs: string[]; processes: number[] } {
  return { dirs: [...dirs], processes: [...markers].flatMap((m) => processesWithMarker(m)) };
}

process.on('exit', () => {
  for (const marker of markers) killRun(undefined, marker);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
