/**
 * Whether a process of this id runs: a lock's owner, the `tally wrap` that opened a session. One of
 * another user answers EPERM: it runs. Not a positive integer: none.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
