/**
 * Where an open file is now. Linux's `/proc/self/fd/<fd>` names the file's current path, also after
 * a folder above it was moved or renamed while it was open (a project moved during its session).
 * Undefined where `/proc` is not mounted, for a file deleted since, or for anything not a path.
 */
import { closeSync, openSync, readlinkSync } from 'node:fs';

export function currentPathOf(fd: number): string | undefined {
  try {
    const path = readlinkSync(`/proc/self/fd/${fd}`);
    return path.startsWith('/') && !path.endsWith(' (deleted)') ? path : undefined;
  } catch {
    return undefined;
  }
}

/** A folder followed by an open descriptor: `now()` is where it is, also after it was moved. */
export interface FollowedFolder {
  now(): string;
  close(): void;
}

export function followFolder(path: string): FollowedFolder {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
  } catch {
    fd = undefined;
  }
  return {
    now: () => (fd === undefined ? path : (currentPathOf(fd) ?? path)),
    close: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
