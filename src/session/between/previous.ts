/**
 * The session closed last in a root, and the end state its signed package recorded: found through
 * the project pointer in the Tally home (else the project's own closed sessions), the package's
 * digest checked against the pointer's, and the end state read from the close's own summary record,
 * whose signature is checked with the pinned keys.
 */
import { readdirSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Baseline } from '../../capture/reconcile/baseline.js';
import { DEFAULT_GIT_TIMEOUT_MS } from '../../capture/reconcile/deadline.js';
import { digestParts } from '../../core/hash.js';
import { isJsonObject } from '../../core/json.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { openRegular, READ_NOFOLLOW } from '../../core/regular-file.js';
import { reconcileBody } from '../../evidence/receipt/reconcile-parts.js';
import { closeSummaryIn, lastLines, TAIL_LINES } from '../close-summary.js';
import { readSessionInfo, type SessionInfo } from '../store.js';
import { type ProjectPointer, readPointer } from './pointer.js';

/** Where the previous session was looked for, and what was found. */
export type Previous =
  | { state: 'none' }
  | { state: 'missing' | 'unverified'; session: string; package?: string; reason: string }
  | {
      state: 'verified';
      session: string;
      package: string;
      package_digest: string;
      closed_at?: string;
      /** The end state its close recorded; absent when it recorded none. */
      end?: Baseline;
    };

/** The closed session of `root` with the latest `closed_at` under the project's `sessions/`. */
function latestClosed(state: string, root: string): SessionInfo | null {
  let names: string[];
  try {
    names = readdirSync(join(state, 'sessions')).filter((name) => name.startsWith('ses_'));
  } catch {
    return null;
  }
  let latest: SessionInfo | null = null;
  for (const name of names) {
    let info: SessionInfo;
    try {
      info = readSessionInfo(state, name);
    } catch {
      continue;
    }
    if (info.state !== 'closed' || info.root !== root || info.package === undefined) continue;
    if (latest === null || String(info.closed_at) > String(latest.closed_at)) latest = info;
  }
  return latest;
}

/**
 * The previous session of `root`: the pointer's (the latest close of this root under this Tally
 * home), else the latest closed session the project holds; its end state checked with `trusted`.
 */
export async function previousSession(options: {
  state: string;
  root: string;
  home: string;
  trusted: readonly PublicKeyInput[];
  /** How long reading the previous package may take (default the pass's git deadline). */
  timeoutMs?: number;
}): Promise<Previous> {
  const pointer = readPointer(options.home, options.root);
  if (pointer !== null && 'error' in pointer) {
    const local = latestClosed(options.state, options.root);
    return { state: 'unverified', session: local?.id ?? 'unknown', reason: pointer.error };
  }
  const chosen:
    | (Pick<ProjectPointer, 'session' | 'package'> & { package_digest?: string; closed_at?: string })
    | null = pointer ?? toChosen(latestClosed(options.state, options.root));
  if (chosen === null) return { state: 'none' };
  return readPrevious(chosen, options);
}

function toChosen(info: SessionInfo | null) {
  if (info === null || info.package === undefined) return null;
  return {
    session: info.id,
    package: info.package,
    ...(info.closed_at ? { closed_at: info.closed_at } : {}),
  };
}

/** One read of the digest. */
const CHUNK = 1 << 20;

async function readPrevious(
  chosen: { session: string; package: string; package_digest?: string; closed_at?: string },
  options: { trusted: readonly PublicKeyInput[]; timeoutMs?: number },
): Promise<Previous> {
  const named = { session: chosen.session, package: chosen.package };
  const unverified = (reason: string): Previous => ({ state: 'unverified', ...named, reason });
  let handle: FileHandle;
  try {
    handle = await openRegular(chosen.package, READ_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return {
        state: 'missing',
        ...named,
        reason: `${chosen.package} is not there: the previous session's package was removed`,
      };
    return unverified(`${chosen.package} cannot be read: ${(error as Error).message}`);
  }
  try {
    // Its digest (the pointer names it), read in large pieces within the start's deadline: the
    // package is whatever file the pointer or the session's state names, of any size.
    const { size } = await handle.stat();
    const ms = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
    const deadline = Date.now() + ms;
    const hash = digestParts();
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (let at = 0; at < size; ) {
      const { bytesRead } = await handle.read(chunk, 0, CHUNK, at);
      if (bytesRead === 0) break;
      hash.update(chunk.subarray(0, bytesRead));
      at += bytesRead;
      if (Date.now() > deadline)
        return unverified(`${chosen.package} (${size} bytes) could not be read within ${ms} ms`);
    }
    const digest = hash.digest();
    if (chosen.package_digest !== undefined && digest !== chosen.package_digest)
      return unverified(
        `${chosen.package} holds ${digest}, not the package ${chosen.package_digest} the pointer names: it was replaced`,
      );
    // Only the close's own summary is verified, by its signature: a record the ship key signed for
    // this session, of the type and source only the close writes, is that session's end state
    // whatever the rest of the file holds. Checking every record of a long session would cost each
    // start what \`tally verify\` of the whole package costs.
    const record = closeSummaryIn(await lastLines(handle, size), chosen.session, options.trusted);
    if (record === undefined)
      return unverified(
        `${chosen.package} holds no close summary among its last ${TAIL_LINES} lines: it is not the package of a closed session`,
      );
    if (typeof record === 'string') return unverified(`${chosen.package}: ${record}`);
    const found = reconcileBody(record);
    return {
      state: 'verified',
      ...named,
      package_digest: digest,
      ...(chosen.closed_at ? { closed_at: chosen.closed_at } : {}),
      ...(isJsonObject(found.end) && isJsonObject(found.end.dirty)
        ? { end: found.end as unknown as Baseline }
        : {}),
    };
  } finally {
    await handle.close();
  }
}
