/**
 * Session state on disk: `<state>/sessions/<id>/session.json` (what the session is and whether it is
 * closed), `<state>/sessions/<id>/events.log` (the signed records), `<state>/sessions/current` (the
 * id of the open session commands default to), and `<state>/packages/<id>.tally`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize, parseJson } from '../core/canonical.js';
import { TallyError } from '../core/errors.js';
import { RegularFileError, readRegularFileSync } from '../core/regular-file.js';
import type { AgentAttribution } from '../evidence/record/record.js';

export type SessionErrorCode =
  | 'no-session'
  | 'not-found'
  | 'already-closed'
  | 'ended'
  | 'still-open'
  | 'corrupt'
  | 'bad-event';

export class SessionError extends TallyError<SessionErrorCode> {}

export const SESSION_TYPE = 'tally/session/v1';

export interface SessionInfo {
  type: typeof SESSION_TYPE;
  id: string;
  state: 'open' | 'closed';
  started_at: string;
  closed_at?: string;
  root: string;
  agent?: AgentAttribution;
  /** Path of the agent certificate the session runs under, if any (copied into the session dir). */
  certificate?: string;
  /** Path of the hook registration the session runs under, if any (copied into the session dir). */
  registration?: string;
  /** Digests of changed project registrations already recorded (`tally.registration.changed`). */
  registration_changes?: string[];
  package?: string;
  /** The process that opened the session to seal it itself (`tally wrap` running outside a session). */
  owner?: { command: 'wrap'; pid: number };
}

export function newSessionId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `ses_${stamp}_${randomBytes(4).toString('hex')}`;
}

export function sessionDir(state: string, id: string): string {
  if (!/^ses_[A-Za-z0-9_]+$/.test(id)) throw new SessionError('not-found', `'${id}' is not a session id`);
  return join(state, 'sessions', id);
}

export function logPath(state: string, id: string): string {
  return join(sessionDir(state, id), 'events.log');
}

export function packagePath(state: string, id: string): string {
  return join(state, 'packages', `${id}.tally`);
}

/** The most a session's small state files (session.json, current) may hold. */
const STATE_FILE_LIMIT = 1024 * 1024;

/**
 * Writes a file so that readers see the old or the new content, never a half. The temporary file
 * is made new (`wx`): whatever stood at its name (a FIFO would hold the write forever) is removed
 * first, and one put back meanwhile fails the write instead of holding it.
 */
export function writeAtomic(path: string, data: string | Buffer, mode = 0o644): void {
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, data, { mode, flag: 'wx' });
  renameSync(tmp, path);
}

export function writeSessionInfo(state: string, info: SessionInfo): void {
  const dir = sessionDir(state, info.id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeAtomic(join(dir, 'session.json'), `${canonicalize(info)}\n`);
}

export function readSessionInfo(state: string, id: string): SessionInfo {
  let text: string;
  try {
    text = readRegularFileSync(join(sessionDir(state, id), 'session.json'), STATE_FILE_LIMIT).toString(
      'utf8',
    );
  } catch (error) {
    if (error instanceof RegularFileError)
      throw new SessionError('corrupt', `session ${id}: ${error.message}`, error.detail);
    throw new SessionError('not-found', `no session ${id} under ${join(state, 'sessions')}`);
  }
  try {
    const info = parseJson(text) as SessionInfo;
    if (info.type !== SESSION_TYPE || info.id !== id) throw new Error('unexpected type or id');
    return info;
  } catch (error) {
    throw new SessionError('corrupt', `session ${id}: session.json is corrupt (${(error as Error).message})`);
  }
}

export function setCurrent(state: string, id: string | null): void {
  const path = join(state, 'sessions', 'current');
  if (id === null) rmSync(path, { force: true });
  else writeAtomic(path, `${id}\n`);
}

export function currentSession(state: string): string | null {
  try {
    const id = readRegularFileSync(join(state, 'sessions', 'current'), STATE_FILE_LIMIT)
      .toString('utf8')
      .trim();
    return id.length > 0 ? id : null;
  } catch {
    return null;
  }
}

/** The session a command acts on: the one named, else the current one. */
export function resolveSession(state: string, id: string | undefined): SessionInfo {
  const chosen = id ?? currentSession(state);
  if (!chosen)
    throw new SessionError(
      'no-session',
      "no open session here: run 'tally session start' (or pass --session ID)",
    );
  return readSessionInfo(state, chosen);
}
