/**
 * Temporary directories for tests: tracked, and whatever a test leaves is removed when its test
 * process exits (each test file runs in a process of its own), so a run leaves nothing behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();
let hooked = false;

export function tempDir(prefix = 'tally-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const d of made) rmSync(d, { recursive: true, force: true, maxRetries: 3 });
    });
  }
  return dir;
}

/** Removes a directory made by tempDir now (tests that clean up as they go). */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  made.delete(dir);
}
